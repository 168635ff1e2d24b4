#!/usr/bin/env bash
# Connected endpoints (FI_EP_MSG) beside ufi's RDM endpoints and libfabric's tcp provider,
# measured in the same run, round by round (each figure right after the one it is compared
# with, so both see the same machine state):
#   - 8-byte latency with Debian's fi_pingpong (-S 8): ufi -e rdm and ufi -e msg over the
#     default transports (shared memory between the two processes), then ufi -e msg over tcp
#     (UFI_TLS=tcp) and libfabric's tcp provider -e msg;
#   - 8-byte tagged latency with ufi_perf (-t tag_lat, ucx_perftest's loop, so less noisy
#     than fi_pingpong's): -e rdm and -e msg over the default transports, -e msg over tcp,
#     and beside it the floor under every tcp figure here: raw UCT's active-message latency
#     over tcp on the same loopback (ucx_perftest -t am_lat -x tcp), and under that the
#     kernel's own: a raw loopback socket ping-pong with busy receives and no library
#     (tools/bench/tcp_floor.c);
#   - connection setup (fi_connect to FI_CONNECTED at the client; ufi over the default
#     transports and over tcp only): tools/bench/msg_connect.c
#     built against ufi (build/tools/bench/msg_connect) and, here, against Debian's
#     libfabric.so.1 with ufi's headers (the ABI is the same), provider tcp.
# Prints each round and the ratios (lower is better). A benchmark, not a test.
#   scripts/bench-msg.sh [build-dir] [rounds] [iterations]
# Network traffic stays on loopback (UFI_NET_DEVICES=lo, UCX_NET_DEVICES=lo, FI_TCP_IFACE=lo).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
rounds=${2:-5}
iters=${3:-20000}
command -v fi_pingpong >/dev/null || { echo "missing fi_pingpong (libfabric-bin)" >&2; exit 2; }
compat="$build/api/compat"
connect_ufi="$build/tools/bench/msg_connect"
tcp_floor="$build/tools/bench/tcp_floor"
[ -e "$compat/libfabric.so.1" ] && [ -x "$connect_ufi" ] && [ -x "$tcp_floor" ] || { echo "build first (scripts/build.sh)" >&2; exit 2; }
sys=$(ls /usr/lib/*/libfabric.so.1 2>/dev/null | head -1)
[ -n "$sys" ] || { echo "no system libfabric.so.1 (package libfabric1)" >&2; exit 2; }
export UCX_NET_DEVICES=lo FI_TCP_IFACE=lo UFI_NET_DEVICES=lo
connect_sys=$(mktemp)
trap 'rm -f "$connect_sys"' EXIT
cc -O2 -o "$connect_sys" tools/bench/msg_connect.c -Iinclude "$sys"

port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# fi_pingpong's usec/xfer at 8 bytes. $1: ufi or tcp (the library and provider), $2: the
# endpoint type, then env assignments.
pingpong() {
  local lib=$1 type=$2; shift 2
  local p libpath=""
  p=$(port)
  [ "$lib" = ufi ] && libpath="LD_LIBRARY_PATH=$compat"
  env $libpath "$@" timeout 120 fi_pingpong -p "$lib" -e "$type" -S 8 -I "$iters" -B "$p" >/dev/null 2>&1 &
  local srv=$!
  sleep 0.3
  env $libpath "$@" timeout 120 fi_pingpong -p "$lib" -e "$type" -S 8 -I "$iters" -P "$p" 127.0.0.1 2>&1 |
    awk '$1 == "8" { print $7 }'
  wait "$srv" 2>/dev/null || true
}
median_us() { sed -n 's/.*median \([0-9.]*\) us$/\1/p'; }
# ufi_perf -t tag_lat -s 8's one-way latency (us). $1: the endpoint type, then env assignments.
perf_lat() {
  local type=$1; shift
  local p
  p=$(port)
  env "$@" timeout 120 "$build/tools/ufi_perf" -p "$p" >/dev/null 2>&1 &
  local srv=$!
  sleep 0.3
  env "$@" timeout 120 "$build/tools/ufi_perf" -p "$p" -e "$type" -t tag_lat -s 8 -n "$iters" --csv 127.0.0.1 2>/dev/null |
    awk -F, 'NR == 2 { print $5 }'
  wait "$srv" 2>/dev/null || true
}
# Raw UCT's one-way active-message latency over tcp on loopback (us): the transport's floor.
uct_tcp_lat() {
  local p
  p=$(port)
  timeout 120 ucx_perftest -p "$p" >/dev/null 2>&1 &
  local srv=$!
  sleep 0.3
  timeout 120 ucx_perftest 127.0.0.1 -p "$p" -t am_lat -x tcp -d lo -s 8 -n "$iters" 2>&1 |
    awk '/Final:/ { print $4 }'
  wait "$srv" 2>/dev/null || true
}

printf '%5s | %9s %9s %6s | %9s %9s %6s | %9s %9s %6s %9s %6s\n' round rdm_us msg_us msg/rdm tcp_us ufi_tcp ufi/tcp \
  tcp_conn ufi_conn ufi/tcp ufi_tconn ufi/tcp
for i in $(seq "$rounds"); do
  rdm=$(pingpong ufi rdm)
  msg=$(pingpong ufi msg)
  ltcp=$(pingpong tcp msg)
  utcp=$(pingpong ufi msg UFI_TLS=tcp)
  ctcp=$("$connect_sys" 100 tcp | median_us)
  cufi=$("$connect_ufi" 100 | median_us)
  cutcp=$(UFI_TLS=tcp "$connect_ufi" 100 | median_us)
  awk -v i="$i" -v r="$rdm" -v m="$msg" -v lt="$ltcp" -v ut="$utcp" -v ct="$ctcp" -v cu="$cufi" -v cut="$cutcp" 'BEGIN {
    printf "%5d | %9s %9s %6.2f | %9s %9s %6.2f | %9s %9s %6.2f %9s %6.2f\n", i, r, m, m / r, lt, ut, ut / lt, ct, cu, cu / ct, cut, cut / ct }'
  prdm=$(perf_lat rdm)
  pmsg=$(perf_lat msg)
  ptcp=$(perf_lat msg UFI_TLS=tcp)
  uct=$(uct_tcp_lat)
  floor=$("$tcp_floor" "$iters")
  awk -v r="$prdm" -v m="$pmsg" -v t="$ptcp" -v u="$uct" -v lt="$ltcp" -v k="$floor" 'BEGIN {
    printf "      ufi_perf tag_lat: rdm %s us, msg %s us, msg/rdm %.2f | msg over tcp %s us, UCT am_lat tcp %s us: ufi/UCT %.2f, libfabric tcp (above)/UCT %.2f\n", r, m, m / r, t, u, t / u, lt / u
    printf "      raw socket floor %s us: UCT/floor %.2f, ufi msg over tcp/floor %.2f, libfabric tcp/floor %.2f, 0.8x libfabric tcp/floor %.2f\n", k, u / k, t / k, lt / k, 0.8 * lt / k }'
done
