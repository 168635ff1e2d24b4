#!/usr/bin/env bash
# ufi_perf under mpirun: `mpirun -np 4 ufi_perf` runs the group of ufi_perf --procs with the
# processes mpirun started, their names exchanged through mpirun's PMIx server; rank 0 prints
# every measure, positive. Over the default transports (shared memory) and tcp on loopback;
# then a job of one process, and -e msg, refused with their reasons.
# Usage: ufi_perf_mpirun_test.sh <ufi_perf>
set -u
perf=$1
command -v mpirun >/dev/null || { echo "FAIL: mpirun not found (scripts/install-deps.sh installs openmpi-bin)"; exit 1; }
run=(timeout -k 5 150 mpirun --allow-run-as-root --oversubscribe --bind-to none
     --mca oob_tcp_if_include lo -x UFI_NET_DEVICES=lo)
for tls in default tcp; do
  extra=()
  [ "$tls" = tcp ] && extra=(-x UFI_TLS=tcp)
  out=$("${run[@]}" "${extra[@]}" -np 4 "$perf" -n 500 --csv 2>&1)
  rc=$?
  [ $rc -eq 0 ] || { echo "$out"; echo "FAIL: mpirun -np 4 ufi_perf ($tls) exited $rc"; exit 1; }
  echo "== $tls"
  echo "$out"
  [ "$(grep -c '^measure,procs' <<<"$out")" -eq 1 ] || { echo "FAIL: not one report ($tls)"; exit 1; }
  for m in pair_lat_avg pair_lat_max rate_one_peer rate_every_peer bw_pairs; do
    v=$(awk -F, -v m="$m" '$1 == m && $2 == 4 {print $3}' <<<"$out")
    awk -v v="$v" 'BEGIN { exit !(v + 0 > 0) }' || { echo "FAIL: $m is '$v' ($tls)"; exit 1; }
  done
done
out=$("${run[@]}" -x UCX_NET_DEVICES=lo -np 4 "$perf" -n 300 --ucp 2>&1)
grep -q "4 processes (started by a PMIx launcher" <<<"$out" || { echo "$out"; echo "FAIL: the table names no PMIx launcher"; exit 1; }
grep -q "average .* us (UCP .* us: " <<<"$out" || { echo "$out"; echo "FAIL: --ucp under mpirun shows no UCP figure"; exit 1; }
echo "$out"
out=$("${run[@]}" -np 1 "$perf" 2>&1) && { echo "$out"; echo "FAIL: a job of one process ran"; exit 1; }
grep -q "a group needs 2 or more" <<<"$out" || { echo "$out"; echo "FAIL: no reason for the one-process job"; exit 1; }
out=$("${run[@]}" -np 2 "$perf" -e msg 2>&1) && { echo "$out"; echo "FAIL: -e msg under mpirun ran"; exit 1; }
grep -q "no -e msg" <<<"$out" || { echo "$out"; echo "FAIL: no reason for -e msg under mpirun"; exit 1; }
echo "PASS: mpirun -np 4 ufi_perf measured every pair's latency, the message rates and the bandwidth through PMIx, over shared memory and tcp"
