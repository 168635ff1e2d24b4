#!/usr/bin/env bash
# ufi_perf --procs 4: four processes of this host, started by ufi_perf, measure together, over
# the default transports (shared memory between them) and over tcp on loopback; every measure
# comes out, positive.
# Usage: ufi_perf_group_test.sh <ufi_perf>
set -u
perf=$1
for tls in default tcp; do
  env_tls=()
  [ "$tls" = tcp ] && env_tls=(UFI_TLS=tcp)
  out=$(env "${env_tls[@]}" UFI_NET_DEVICES=lo timeout 150 "$perf" --procs 4 -n 500 --csv 2>&1)
  rc=$?
  [ $rc -eq 0 ] || { echo "$out"; echo "FAIL: ufi_perf --procs 4 ($tls) exited $rc"; exit 1; }
  echo "== $tls"
  echo "$out"
  for m in pair_lat_avg pair_lat_max rate_one_peer rate_every_peer bw_pairs; do
    v=$(awk -F, -v m="$m" '$1 == m && $2 == 4 {print $3}' <<<"$out")
    awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }' || { echo "FAIL: $m is '$v' ($tls)"; exit 1; }
  done
done
# Bad input: --procs with a server, or out of range.
"$perf" --procs 1 >/dev/null 2>&1 && { echo "FAIL: --procs 1 accepted"; exit 1; }
"$perf" --procs 4 127.0.0.1 >/dev/null 2>&1 && { echo "FAIL: --procs with a SERVER accepted"; exit 1; }
echo "PASS: ufi_perf --procs 4 measured every pair's latency, the message rates and the bandwidth, over shared memory and tcp"
