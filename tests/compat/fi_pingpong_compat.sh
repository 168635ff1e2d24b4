#!/usr/bin/env bash
# Debian's fi_pingpong (libfabric-bin, built against libfabric 1.17) run unmodified against
# ufi's compat libfabric.so.1: server and client, RDM endpoints, -m msg and -m tagged, every
# size (-S all) with data checks (-c), over shared memory and over tcp pinned to loopback.
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

# One server/client pair; every wait bounded. $1: label, $2: mode, then env assignments.
run_pair() {
  local label=$1 mode=$2; shift 2
  local slog clog port
  slog=$(mktemp) clog=$(mktemp)
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  env "$@" timeout 120 fi_pingpong -p ufi -e rdm -m "$mode" -S all -I 20 -c -B "$port" >"$slog" 2>&1 &
  local server=$!
  sleep 0.3
  env "$@" timeout 120 fi_pingpong -p ufi -e rdm -m "$mode" -S all -I 20 -c -P "$port" 127.0.0.1 >"$clog" 2>&1
  local crc=$?
  wait "$server"
  local src=$?
  if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
    echo "--- server ($label, $mode)"; cat "$slog"; echo "--- client"; cat "$clog"
    rm -f "$slog" "$clog"
    fail "$label -m $mode: client exit $crc, server exit $src"
  fi
  # Every size of -S all ran (1.17 lists 46, 1 byte to 6 MiB), each row complete.
  local rows
  rows=$(grep -c ' =' "$clog")
  [ "$rows" -ge 46 ] && grep -q "^6m " "$clog" || { cat "$clog"; rm -f "$slog" "$clog"; fail "$label -m $mode: $rows sizes ran"; }
  echo "ok: $label -m $mode ($rows sizes)"
  rm -f "$slog" "$clog"
}

for mode in msg tagged; do
  run_pair "shared memory" "$mode" UFI_TLS=shm
  run_pair "tcp on loopback" "$mode" UFI_TLS=tcp UFI_NET_DEVICES=lo
  run_pair "default transports" "$mode"
done
echo "PASS"
