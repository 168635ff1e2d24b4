#!/usr/bin/env bash
# Debian's fi_pingpong (libfabric-bin) against ufi's compat libfabric.so.1 between two hosts
# of the multi-host test bed (testbed.sh), with ufi's default transport selection (no UFI_TLS,
# every device): RDM and connected (MSG) endpoints, -m msg and -m tagged, every size with
# data checks (-c). The client's protocol choice (UFI_PROTO_INFO) must name tcp over the
# hosts' link; a pair on one host must choose shared memory.
# Usage: pingpong_multihost.sh <compat dir>   (77 = skipped)
set -uo pipefail
compat_dir=$1
. "$(dirname "$0")/testbed.sh"
command -v fi_pingpong >/dev/null || mh_skip "fi_pingpong not installed (apt-get install libfabric-bin)"
mh_up 2

fail() { echo "FAIL: $*"; exit 1; }

# One pair: server on host $1, client on host $2; $3 endpoint type, $4 mode, $5 sizes. Prints
# the lane the client's data path chose.
run_pair() {
  local sh=$1 ch=$2 type=$3 mode=$4 sizes=$5 port slog clog server crc src lane
  slog="$mh_dir/server.log" clog="$mh_dir/client.log"
  port=$(mh_port "$sh")
  mh_on "$sh" env LD_LIBRARY_PATH="$compat_dir" timeout 120 \
    fi_pingpong -p ufi -e "$type" -m "$mode" -S "$sizes" -I 20 -c -B "$port" >"$slog" 2>&1 &
  server=$!
  sleep 0.3
  local dest=$(mh_addr "$sh")
  [ "$sh" = "$ch" ] && dest=127.0.0.1
  mh_on "$ch" env LD_LIBRARY_PATH="$compat_dir" UFI_LOG_LEVEL=info UFI_PROTO_INFO=y timeout 120 \
    fi_pingpong -p ufi -e "$type" -m "$mode" -S "$sizes" -I 20 -c -P "$port" "$dest" >"$clog" 2>&1
  crc=$?
  wait "$server"; src=$?
  if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
    echo "--- server"; cat "$slog"; echo "--- client"; grep -v '<debug>' "$clog"
    fail "host $sh -> host $ch, -e $type -m $mode: client exit $crc, server exit $src"
  fi
  local rows
  rows=$(grep -c ' =' "$clog")
  if [ "$sizes" = all ]; then
    # 1.17's -S all: 46 sizes, 1 byte to 6 MiB.
    [ "$rows" -ge 46 ] && grep -q '^6m ' "$clog" || { cat "$clog"; fail "-e $type -m $mode: $rows sizes ran"; }
  fi
  lane=$(grep -o 'active messages over [a-z]*/[A-Za-z0-9]*' "$clog" | head -1)
  echo "ok: host $sh -> host $ch, -e $type -m $mode, $rows sizes, ${lane:-no protocol line}"
  LANE=$lane
}

for type in rdm msg; do
  for mode in msg tagged; do
    run_pair 1 2 "$type" "$mode" all
    case "$LANE" in
      *"over tcp/v2") ;;
      *) fail "between hosts the client chose '$LANE', not tcp over the hosts' link (v2)" ;;
    esac
  done
done
# Two processes of one host: shared memory, as on a real host.
run_pair 1 1 rdm tagged 64
case "$LANE" in
  *"over posix/"* | *"over sysv/"*) ;;
  *) fail "within one host the client chose '$LANE', not shared memory" ;;
esac
echo "PASS"
