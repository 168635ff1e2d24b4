#!/usr/bin/env bash
# Debian's fi_pingpong (libfabric-bin, built against libfabric 1.17) run unmodified against
# ufi's compat libfabric.so.1: server and client, RDM, DGRAM and MSG (connected) endpoints,
# -m msg and -m tagged, every size (-S all; for datagrams
# every size up to max_msg_size) with data checks (-c), over shared memory and over tcp pinned
# to loopback.
# fi_pingpong exchanges addresses over its own TCP control socket on 127.0.0.1.
# Usage: fi_pingpong_compat.sh <compat dir>   (77 = skipped)
# Control ports are ones the kernel finds free at each pair (fixed ports in the ephemeral range
# collide with those other tests' tcp transports listen on).
set -uo pipefail
compat_dir=$1
fail() { echo "FAIL: $*"; exit 1; }
command -v fi_pingpong >/dev/null || { echo "SKIP: fi_pingpong not installed (apt-get install libfabric-bin)"; exit 77; }
export LD_LIBRARY_PATH="$compat_dir"
export FI_LOG_LEVEL=warn
grep -q "$compat_dir/libfabric.so.1" <<<"$(ldd "$(command -v fi_pingpong)")" || fail "fi_pingpong does not load ufi's library"

# One server/client pair; every wait bounded. $1: label, $2: endpoint type, $3: mode, then env
# assignments.
run_pair() {
  local label=$1 type=$2 mode=$3; shift 3
  local slog clog port
  slog=$(mktemp) clog=$(mktemp)
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  env "$@" timeout 120 fi_pingpong -p ufi -e "$type" -m "$mode" -S all -I 20 -c -B "$port" >"$slog" 2>&1 &
  local server=$!
  sleep 0.3
  env "$@" timeout 120 fi_pingpong -p ufi -e "$type" -m "$mode" -S all -I 20 -c -P "$port" 127.0.0.1 >"$clog" 2>&1
  local crc=$?
  wait "$server"
  local src=$?
  if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
    echo "--- server ($label, $mode)"; cat "$slog"; echo "--- client"; cat "$clog"
    rm -f "$slog" "$clog"
    fail "$label -e $type -m $mode: client exit $crc, server exit $src"
  fi
  # Every size of -S all ran (1.17 lists 46, 1 byte to 6 MiB), each row complete; datagrams
  # every size up to their max_msg_size (8168 bytes on Debian 12's UCX: 1 byte to 6 KiB).
  local rows want=46 last=6m
  if [ "$type" = dgram ]; then
    read -r want last < <(python3 -c '
import sys
m = int(sys.argv[1])
sizes = sorted({1 << p for p in range(23)} | {3 << p for p in range(22)})  # 1, 2, 3, 4, 6, ... 6 MiB
fit = [s for s in sizes if s <= m]
name = lambda s: str(s) if s < 1024 else (str(s >> 10) + "k" if s % 1024 == 0 else str(s / 1024) + "k")
print(len(fit), name(fit[-1]))' "$dgram_max")
  fi
  rows=$(grep -c ' =' "$clog")
  [ "$rows" -ge "$want" ] && grep -q "^$last " "$clog" || { cat "$clog"; rm -f "$slog" "$clog"; fail "$label -e $type -m $mode: $rows sizes ran"; }
  echo "ok: $label -e $type -m $mode ($rows sizes)"
  rm -f "$slog" "$clog"
}

for mode in msg tagged; do
  run_pair "shared memory" rdm "$mode" UFI_TLS=shm
  run_pair "tcp on loopback" rdm "$mode" UFI_TLS=tcp UFI_NET_DEVICES=lo
  run_pair "default transports" rdm "$mode"
done
dgram_max=$(fi_info -p ufi -t FI_EP_DGRAM -v 2>/dev/null | awk '/max_msg_size/ { print $2; exit }')
[ -n "$dgram_max" ] || fail "fi_info lists no FI_EP_DGRAM entry of ufi"
for mode in msg tagged; do
  run_pair "shared memory" dgram "$mode" UFI_TLS=shm
  run_pair "tcp on loopback" dgram "$mode" UFI_TLS=tcp UFI_NET_DEVICES=lo
done
run_pair "default transports" dgram msg
# Connected endpoints: the connection manager listens and connects on 127.0.0.1; the data
# lanes are shared memory (default) or tcp on loopback.
for mode in msg tagged; do
  run_pair "tcp on loopback" msg "$mode" UFI_TLS=tcp UFI_NET_DEVICES=lo
  run_pair "default transports" msg "$mode" UFI_NET_DEVICES=lo
done
echo "PASS"
