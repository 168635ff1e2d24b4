#!/usr/bin/env bash
# ufi beside its anchors, measured in the same run, pair by pair (each ufi figure right after
# its anchor, so both see the same machine state): ufi_perf against ucx_perftest (UCP, and
# raw UCT for latency), Debian's fi_pingpong on ufi against libfabric's shm and tcp providers.
# Prints each pair with the ratio ufi/anchor (latency: lower is better; rate and bandwidth:
# higher is better). Benchmarks, not tests: nothing here passes or fails.
# Usage: scripts/bench.sh [quick]       (after scripts/build.sh; build/ is used)
# Network traffic stays on loopback (UFI_NET_DEVICES=lo, UCX_NET_DEVICES=lo, FI_TCP_IFACE=lo).
set -u
cd "$(dirname "$0")/.."
n_lat=100000; n_rate=400000; n_bw=3000; n_tcp=20000
[ "${1:-}" = quick ] && { n_lat=20000; n_rate=100000; n_bw=500; n_tcp=5000; }

# The tools, the build, loopback only, a port range; ucx and ufi: scripts/bench-common.sh
. scripts/bench-common.sh
pingpong() {  # env, provider, then fi_pingpong args; prints usec/xfer
  local env="$1" prov="$2"; shift 2
  env $env timeout 120 fi_pingpong -p "$prov" -B $port "$@" >/dev/null 2>&1 &
  local srv=$!; sleep 0.5
  env $env timeout 120 fi_pingpong -p "$prov" -P $port "$@" 127.0.0.1 2>&1 | tail -1 | awk '{print $7}'
  wait $srv 2>/dev/null; port=$((port + 1))
}
row() {  # what, ufi value, anchor name, anchor value, unit
  local ratio
  ratio=$(awk -v a="$2" -v b="$4" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  printf '%-44s %12s  %-34s %12s  %6s  %s\n' "$1" "$2" "$3" "$4" "$ratio" "$5"
}
col() { awk -F, -v c="$1" '{print $c}'; }

printf '%-44s %12s  %-34s %12s  %6s  %s\n' "measure" "ufi" "anchor" "value" "ratio" "unit"
uct=$(ucx "UCX_TLS=posix" -t am_lat -d memory -x posix -n $n_lat -s 8 | awk '{print $4}')
ucp_line=$(ucx "" -t tag_lat -n $n_lat -s 8)
ufi_line=$(ufi "" -t tag_lat -n $n_lat -s 8)
u=$(echo "$ufi_line" | col 5)
row "tag 8B one-way latency, shared memory" "$u" "UCP tag_lat" "$(echo "$ucp_line" | awk '{print $4}')" "us"
row "" "$u" "UCT am_lat posix (floor)" "$uct" "us"
# The median iteration (ucx_perftest's "typical"), less moved by this machine's hiccups.
row "  the same, typical (median iteration)" "$(echo "$ufi_line" | col 8)" "UCP tag_lat typical" \
  "$(echo "$ucp_line" | awk '{print $3}')" "us"
ucp=$(ucx "" -t tag_bw -n $n_rate -s 8 | awk '{print $9}')
u=$(ufi "" -t tag_bw -n $n_rate -s 8 | col 7)
row "tag 8B message rate, shared memory" "$u" "UCP tag_bw" "$ucp" "msg/s"
ucp=$(ucx "" -t tag_bw -n $n_bw -s 1048576 | awk '{print $6}')
u=$(ufi "" -t tag_bw -n $n_bw -s 1048576 | col 6)
row "tag 1 MiB bandwidth, shared memory" "$u" "UCP tag_bw" "$ucp" "MB/s"
lf=$(pingpong "" shm -e rdm -m tagged -I $n_lat -S 8)
u=$(pingpong "LD_LIBRARY_PATH=$compat" ufi -e rdm -m tagged -I $n_lat -S 8)
row "fi_pingpong tagged 8B one-way, shm" "$u" "libfabric shm provider" "$lf" "us"
ucp=$(ucx "UCX_TLS=tcp" -t tag_lat -n $n_tcp -s 8 | awk '{print $4}')
u=$(ufi "UFI_TLS=tcp" -t tag_lat -n $n_tcp -s 8 | col 5)
row "tag 8B one-way latency, tcp loopback" "$u" "UCP tag_lat tcp" "$ucp" "us"
lf=$(pingpong "" tcp -e rdm -m tagged -I $n_tcp -S 8)
u=$(pingpong "LD_LIBRARY_PATH=$compat UFI_TLS=tcp" ufi -e rdm -m tagged -I $n_tcp -S 8)
row "fi_pingpong tagged 8B one-way, tcp" "$u" "libfabric tcp provider" "$lf" "us"
ucp=$(ucx "UCX_TLS=tcp" -t tag_bw -n $((n_bw / 2)) -s 1048576 | awk '{print $6}')
u=$(ufi "UFI_TLS=tcp" -t tag_bw -n $((n_bw / 2)) -s 1048576 | col 6)
row "tag 1 MiB bandwidth, tcp loopback" "$u" "UCP tag_bw tcp" "$ucp" "MB/s"
