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
# --ucp: the same processes then measure over UCP; its figures and the ratios come out too.
out=$(UFI_NET_DEVICES=lo UCX_NET_DEVICES=lo timeout 150 "$perf" --procs 3 -n 300 --ucp --csv 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "$out"; echo "FAIL: ufi_perf --procs 3 --ucp exited $rc"; exit 1; }
echo "== --ucp"
echo "$out"
for m in pair_lat_avg bw_pairs ucp_pair_lat_avg ucp_pair_lat_max ucp_rate_one_peer ucp_rate_every_peer \
         ucp_bw_pairs ratio_pair_lat_avg ratio_rate_one_peer ratio_rate_every_peer ratio_bw_pairs; do
  v=$(awk -F, -v m="$m" '$1 == m && $2 == 3 {print $3}' <<<"$out")
  awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }' || { echo "FAIL: $m is '$v' (--ucp)"; exit 1; }
done
out=$(UFI_NET_DEVICES=lo UCX_NET_DEVICES=lo timeout 150 "$perf" --procs 2 -n 300 --ucp 2>&1)
grep -q "average .* us (UCP .* us: " <<<"$out" || { echo "$out"; echo "FAIL: the table shows no UCP figure"; exit 1; }
# Bad input: --procs with a server, or out of range; --ucp for a pair.
"$perf" --ucp >/dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: --ucp without a group accepted"; exit 1; }
"$perf" --procs 1 >/dev/null 2>&1 && { echo "FAIL: --procs 1 accepted"; exit 1; }
"$perf" --procs 4 127.0.0.1 >/dev/null 2>&1 && { echo "FAIL: --procs with a SERVER accepted"; exit 1; }
echo "PASS: ufi_perf --procs 4 measured every pair's latency, the message rates and the bandwidth, over shared memory and tcp, and beside UCP (--ucp)"
