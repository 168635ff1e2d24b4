#!/usr/bin/env bash
# ufi's RMA and atomics beside UCP's, measured in the same run, pair by pair: ufi_perf's
# put_lat, get_lat, put_bw, get_bw, fadd_lat, fadd_rate against ucx_perftest's ucp_put_lat,
# ucp_get, ucp_put_bw, ucp_fadd. ucx_perftest allocates its buffers through UCX
# (ucp_mem_map ALLOCATE: shared-memory segments the peer maps and stores into directly);
# ufi registers user memory. So each UCP figure is given twice: as ucx_perftest runs by
# default ("mapped"), and with UCX_ALLOC_PRIO=heap ("user memory", what ufi is compared with).
# Prints ratios ufi/anchor (latency: lower is better; bandwidth and rate: higher is better).
# `tcp` instead measures 64 KiB and 1 MiB puts and gets over tcp on loopback (UFI_TLS=tcp,
# UCX_TLS=tcp, user memory only), where ufi's writes are put by the initiator.
# Benchmarks, not tests. Usage: scripts/bench-rma.sh [quick|tcp]   (after scripts/build.sh)
set -u
cd "$(dirname "$0")/.."
n_lat=20000; n_bw=2000
[ "${1:-}" = quick ] && { n_lat=5000; n_bw=500; }
command -v ucx_perftest >/dev/null || { echo "missing ucx_perftest: scripts/install-deps.sh installs it" >&2; exit 2; }
perf=build/tools/ufi_perf
[ -x $perf ] || { echo "build first (scripts/build.sh)" >&2; exit 2; }
export UCX_NET_DEVICES=lo UFI_NET_DEVICES=lo
port=$((20000 + RANDOM % 20000))

ucx() {  # env, then ucx_perftest args; prints the Final row
  local env="$1"; shift
  env $env ucx_perftest -p $port >/dev/null 2>&1 &
  local srv=$!; sleep 0.5
  env $env timeout 120 ucx_perftest 127.0.0.1 -p $port "$@" 2>&1 | awk '/Final:/ {print}'
  wait $srv 2>/dev/null; port=$((port + 1))
}
ufi() {  # ufi_perf args; prints the CSV row
  $perf -p $port >/dev/null 2>&1 &
  local srv=$!; sleep 0.5
  timeout 120 $perf -p $port --csv "$@" 127.0.0.1 2>&1 | tail -1
  wait $srv 2>/dev/null; port=$((port + 1))
}
row() {  # what, ufi value, anchor name, anchor value, unit
  local ratio
  ratio=$(awk -v a="$2" -v b="$4" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
  printf '%-34s %12s  %-36s %12s  %6s  %s\n' "$1" "$2" "$3" "$4" "$ratio" "$5"
}
col() { awk -F, -v c="$1" '{print $c}'; }
# ucx_perftest's Final row: $4 average latency (us), $6 bandwidth (MB/s), $8 message rate.
lat() { awk '{print $4}'; }
bw() { awk '{print $6}'; }
rate() { awk '{print $8}'; }

printf '%-34s %12s  %-36s %12s  %6s  %s\n' "measure" "ufi" "anchor" "value" "ratio" "unit"
if [ "${1:-}" = tcp ]; then
  export UFI_TLS=tcp UCX_TLS=tcp
  for s in 65536 1048576; do
    u=$(ufi -t put_lat -s $s -n $n_bw | col 5)
    row "tcp put $s B one-way latency" "$u" "ucp_put_lat (user memory)" "$(ucx UCX_ALLOC_PRIO=heap -t ucp_put_lat -s $s -n $n_bw | lat)" us
    u=$(ufi -t put_bw -s $s -n $n_bw | col 6)
    row "tcp put $s B bandwidth" "$u" "ucp_put_bw (user memory)" "$(ucx UCX_ALLOC_PRIO=heap -t ucp_put_bw -s $s -n $n_bw | bw)" MB/s
    u=$(ufi -t get_bw -s $s -n $n_bw | col 6)
    row "tcp get $s B bandwidth" "$u" "ucp_get (user memory)" "$(ucx UCX_ALLOC_PRIO=heap -t ucp_get -s $s -n $n_bw | bw)" MB/s
  done
  exit 0
fi
for mem in heap default; do
  env_mem="UCX_ALLOC_PRIO=heap"; label="user memory"
  [ $mem = default ] && { env_mem="BENCH_MEMORY=mapped"; label="mapped"; }  # (env needs a word)
  u=$(ufi -t put_lat -s 8 -n $n_lat | col 5)
  row "put 8B one-way latency" "$u" "ucp_put_lat ($label)" "$(ucx "$env_mem" -t ucp_put_lat -s 8 -n $n_lat | lat)" us
  # ucp_get and ucp_fadd stream their operations (many in flight): their latency is the time per
  # operation in that stream, so ufi's streamed tests (get_bw, fadd_rate) stand beside them.
  u=$(ufi -t get_bw -s 8 -n $n_lat | col 5)
  row "get 8B, time per op (streamed)" "$u" "ucp_get ($label)" "$(ucx "$env_mem" -t ucp_get -s 8 -n $n_lat | lat)" us
  u=$(ufi -t put_bw -s 1M -n $n_bw | col 6)
  row "put 1 MiB bandwidth" "$u" "ucp_put_bw ($label)" "$(ucx "$env_mem" -t ucp_put_bw -s 1048576 -n $n_bw | bw)" MB/s
  u=$(ufi -t get_bw -s 1M -n $n_bw | col 6)
  row "get 1 MiB bandwidth" "$u" "ucp_get ($label)" "$(ucx "$env_mem" -t ucp_get -s 1048576 -n $n_bw | bw)" MB/s
  f=$(ucx "$env_mem" -t ucp_fadd -s 8 -n $n_lat)
  u=$(ufi -t fadd_rate -n $n_lat)
  row "fetch-add 64-bit, time per op" "$(echo "$u" | col 5)" "ucp_fadd ($label)" "$(echo "$f" | lat)" us
  row "fetch-add 64-bit rate" "$(echo "$u" | col 7)" "ucp_fadd ($label)" "$(echo "$f" | rate)" ops/s
done
# One at a time (no UCP anchor: ucp_fadd and ucp_get stream).
row "fetch-add 64-bit latency (one at a time)" "$(ufi -t fadd_lat -n $n_lat | col 5)" "-" "" us
row "get 8B latency (one at a time)" "$(ufi -t get_lat -s 8 -n $n_lat | col 5)" "-" "" us
