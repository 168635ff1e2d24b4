#!/usr/bin/env bash
# Two ufi libraries side by side, and UCP beside them, in one run: each round runs
# `ufi_perf -t TEST -s SIZE` (SIZE: 8 unless set) against the old library, then the new one, then ucx_perftest's
# UCX_TEST on user memory (UCX_ALLOC_PRIO=heap), with the server pinned to core 0 and the
# client to core 1; prints the minimum, lower quartile and median of each (us).
# A benchmark, not a test. Usage, after scripts/build.sh:
#   mkdir -p /tmp/libold && cp -L <old build>/api/libufi.so.0 /tmp/libold/
#   mkdir -p /tmp/libnew && cp -L build/api/libufi.so.0 /tmp/libnew/
#   ROUNDS=15 N=30000 scripts/bench-ab.sh /tmp/libold /tmp/libnew put_lat ucp_put_lat
# (the libraries must speak the same protocol as each other only within a run: both sides of
# a run use one library). Shared memory; tcp would go to loopback (UFI_NET_DEVICES=lo).
# UCT=1 adds raw UCT per round: ucx_perftest -t am_lat over posix (8-byte am_short).
# The same library twice (old = new) compares one library with its anchors.
set -u
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 2,15p "$0" >&2; exit 2; }
old=$1 new=$2 test=${3:-put_lat} ucx_test=${4:-ucp_put_lat}
rounds=${ROUNDS:-15} n=${N:-30000} size=${SIZE:-8}
perf=build/tools/ufi_perf
[ -x $perf ] || { echo "build first (scripts/build.sh)" >&2; exit 2; }
export UCX_NET_DEVICES=lo UFI_NET_DEVICES=lo
port=$((30000 + RANDOM % 10000))
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for _ in $(seq "$rounds"); do
  for lib in old new; do
    dir=$old; [ $lib = new ] && dir=$new
    LD_LIBRARY_PATH=$dir taskset -c 0 $perf -p $port >/dev/null 2>&1 & srv=$!
    sleep 0.3
    v=$(LD_LIBRARY_PATH=$dir timeout 60 taskset -c 1 $perf -p $port --csv -t "$test" -s "$size" -n "$n" 127.0.0.1 2>&1 |
        tail -1 | awk -F, '{print $5}')
    wait $srv; port=$((port + 1))
    echo "$lib $v" >> "$raw"
  done
  UCX_ALLOC_PRIO=heap taskset -c 0 ucx_perftest -p $port >/dev/null 2>&1 & srv=$!
  sleep 0.3
  v=$(UCX_ALLOC_PRIO=heap timeout 60 taskset -c 1 ucx_perftest 127.0.0.1 -p $port -t "$ucx_test" -s "$size" -n "$n" 2>&1 |
      awk '/Final:/ {print $4}')
  wait $srv; port=$((port + 1))
  echo "ucp $v" >> "$raw"
  if [ "${UCT:-0}" = 1 ]; then
    UCX_TLS=posix taskset -c 0 ucx_perftest -p $port >/dev/null 2>&1 & srv=$!
    sleep 0.3
    v=$(UCX_TLS=posix timeout 60 taskset -c 1 ucx_perftest 127.0.0.1 -p $port -t am_lat -d memory -x posix -s "$size" -n "$n" 2>&1 |
        awk '/Final:/ {print $4}')
    wait $srv; port=$((port + 1))
    echo "uct $v" >> "$raw"
  fi
done
for k in old new ucp uct; do
  [ $k = uct ] && [ "${UCT:-0}" != 1 ] && continue
  awk -v k=$k '$1 == k && $2 != "" {print $2}' "$raw" | sort -g |
    awk -v k=$k '{a[NR] = $1} END {
      if (NR) printf "%-4s runs %2d  min %s  q1 %s  median %s\n", k, NR, a[1], a[int(NR / 4) + 1], a[int(NR / 2) + 1]
      else printf "%-4s no run gave a figure\n", k }'
done
