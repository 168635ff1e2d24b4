#!/usr/bin/env bash
# Latency and bandwidth against message size, ufi beside UCP and libfabric's own providers,
# each size measured pair by pair in one run (ufi right after its anchor): ufi_perf against
# ucx_perftest (tag_lat, tag_bw), and Debian's fi_pingpong (-S all) on ufi against libfabric's
# shm and tcp providers. Writes CSV (series,transport,kind,size,value) to stdout; plot it with
# scripts/plot-perf.sh. Over shared memory and over tcp on loopback (UFI_NET_DEVICES=lo,
# UCX_NET_DEVICES=lo, FI_TCP_IFACE=lo). Benchmarks, not tests.
# Usage: scripts/bench-sizes.sh [quick] > perf.csv      (after scripts/build.sh)
set -u
cd "$(dirname "$0")/.."
scale=1
[ "${1:-}" = quick ] && scale=5
sizes=${SIZES:-"8 64 512 4096 32768 262144 1048576 4194304"}

iters() {  # a count that keeps each size to a fraction of a second
  local n=$(( 200000000 / ($1 + 1000) / scale ))
  [ $n -gt 20000 ] && n=$((20000 / scale)); [ $n -lt 100 ] && n=100
  echo $n
}
# The tools, the build, loopback only, a port range; ucx and ufi: scripts/bench-common.sh
. scripts/bench-common.sh
pingpong() {  # series, transport, env, provider: every size of -S all, one-way usec/xfer
  local series=$1 transport=$2 env="$3" prov=$4
  env $env timeout 300 fi_pingpong -p "$prov" -e rdm -m tagged -S all -I $((500 / scale)) -B $port >/dev/null 2>&1 &
  local srv=$!; sleep 0.5
  env $env timeout 300 fi_pingpong -p "$prov" -e rdm -m tagged -S all -I $((500 / scale)) -P $port 127.0.0.1 2>&1 |
    awk -v s="$series" -v t="$transport" '
      $1 ~ /^[0-9]+[kmg]?$/ && $2 ~ /^[0-9]+$/ {
        n = $1; m = 1
        if (n ~ /k$/) m = 1024; else if (n ~ /m$/) m = 1048576; else if (n ~ /g$/) m = 1073741824
        sub(/[kmg]$/, "", n)
        printf "%s,%s,lat,%d,%s\n", s, t, n * m, $7
      }'
  wait $srv 2>/dev/null; port=$((port + 1))
}

echo "series,transport,kind,size,value"
for transport in shm tcp; do
  if [ $transport = shm ]; then ucp_env=""; ufi_env=""; prov=shm; else ucp_env="UCX_TLS=tcp"; ufi_env="UFI_TLS=tcp"; prov=tcp; fi
  for s in $sizes; do
    n=$(iters $s)
    echo "UCP,$transport,lat,$s,$(ucx "$ucp_env" -t tag_lat -n $n -s $s | awk '{print $4}')"
    echo "ufi,$transport,lat,$s,$(ufi "$ufi_env" -t tag_lat -n $n -s $s | awk -F, '{print $5}')"
    echo "UCP,$transport,bw,$s,$(ucx "$ucp_env" -t tag_bw -n $n -s $s | awk '{print $6}')"
    echo "ufi,$transport,bw,$s,$(ufi "$ufi_env" -t tag_bw -n $n -s $s | awk -F, '{print $6}')"
  done
  pingpong "libfabric $prov (fi_pingpong)" $transport "" $prov
  pingpong "ufi (fi_pingpong)" $transport "LD_LIBRARY_PATH=$compat $ufi_env" ufi
done
