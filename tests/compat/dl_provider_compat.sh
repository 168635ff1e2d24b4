#!/usr/bin/env bash
# ufi as a provider of Debian's own libfabric (1.17): with FI_PROVIDER_PATH naming the folder
# of libufi-fi.so, Debian's fi_info lists ufi beside its own providers, and Debian's
# fi_pingpong, loading Debian's libfabric.so.1 (not ufi's compat library), runs over ufi:
# RDM, DGRAM and MSG endpoints, tagged and untagged, data checked (-c).
# Usage: dl_provider_compat.sh <dir of libufi-fi.so>   (77 = skipped)
set -uo pipefail
dl_dir=$1
fail() { echo "FAIL: $*"; exit 1; }
command -v fi_info >/dev/null && command -v fi_pingpong >/dev/null ||
  { echo "SKIP: fi_info / fi_pingpong not installed (apt-get install libfabric-bin)"; exit 77; }
[ -f "$dl_dir/libufi-fi.so" ] || fail "no $dl_dir/libufi-fi.so"
unset LD_LIBRARY_PATH
export FI_PROVIDER_PATH=$dl_dir FI_LOG_LEVEL=warn UFI_NET_DEVICES=lo
sys=$(ldd "$(command -v fi_pingpong)" | awk '/libfabric.so.1/ {print $3}')
case $sys in
  "$dl_dir"*|*/ufi/*) fail "fi_pingpong loads ufi's compat library ($sys): this test is about the system's" ;;
esac
echo "fi_pingpong loads $sys"

out=$(timeout 60 fi_info -p ufi 2>/dev/null) || fail "fi_info -p ufi failed"
grep -q "^provider: ufi$" <<<"$out" || fail "fi_info -p ufi lists no ufi entry"
for t in FI_EP_RDM FI_EP_DGRAM FI_EP_MSG; do
  grep -q "type: $t" <<<"$out" || fail "fi_info -p ufi lists no $t entry"
done
all=$(timeout 60 fi_info -l 2>/dev/null) || fail "fi_info -l failed"
grep -q "^ufi:" <<<"$all" || fail "fi_info -l does not list ufi beside the other providers"
echo "fi_info lists ufi: $(grep -c '^provider: ufi$' <<<"$out") entries"

run_pair() {
  local type=$1 mode=$2 slog clog port
  slog=$(mktemp) clog=$(mktemp)
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  timeout 120 fi_pingpong -p ufi -e "$type" -m "$mode" -S all -I 20 -c -B "$port" >"$slog" 2>&1 &
  local server=$!
  sleep 0.5
  timeout 120 fi_pingpong -p ufi -e "$type" -m "$mode" -S all -I 20 -c -P "$port" 127.0.0.1 >"$clog" 2>&1
  local crc=$?
  wait "$server"
  local src=$?
  if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
    echo "--- server"; cat "$slog"; echo "--- client"; cat "$clog"
    rm -f "$slog" "$clog"
    fail "fi_pingpong -p ufi -e $type -m $mode through the system libfabric: client $crc, server $src"
  fi
  local rows
  rows=$(grep -cE '^[0-9]+[kmg]?[[:space:]]+20[[:space:]]+=20' "$clog")
  rm -f "$slog" "$clog"
  echo "fi_pingpong -e $type -m $mode: $rows sizes"
  [ "$rows" -ge 1 ] || fail "-e $type -m $mode reported no size"
}
run_pair rdm tagged
run_pair rdm msg
run_pair msg msg
run_pair dgram msg
echo "PASS: Debian's libfabric loads ufi as a provider; fi_info and fi_pingpong run over it"
