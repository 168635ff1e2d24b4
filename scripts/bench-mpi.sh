#!/usr/bin/env bash
# MPI ping-pong latency and windowed bandwidth (tools/bench/mpi/mpi_bench.c, 8 B to 4 MiB)
# over three Open MPI paths in one run, each rank pair on this host:
#   ufi     pml cm + mtl ofi on ufi's compat libfabric.so.1 (shared memory + tcp on lo)
#   vader   pml ob1 + btl vader,self (Open MPI's own shared memory)
#   ucx     pml ucx (UCX's protocol layer, UCP)
# Prints each path's table and the ratios ufi/vader and ufi/ucx.
#   scripts/bench-mpi.sh [build-dir] [base-iterations]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
base=${2:-20000}
bench="$build/tools/bench/mpi_bench"
[ -x "$bench" ] || { echo "no $bench (needs libopenmpi-dev at configure time)" >&2; exit 1; }
common=(--allow-run-as-root --oversubscribe --bind-to core -np 2
        --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo -x UCX_NET_DEVICES=lo)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
  local name=$1; shift
  echo "== $name: mpirun $* $bench $base" >&2
  mpirun "${common[@]}" "$@" "$bench" "$base" | grep -v '^#' >"$out/$name"
}
run ufi -x LD_LIBRARY_PATH="$PWD/$build/api/compat" -x UFI_NET_DEVICES=lo --mca pml cm --mca mtl ofi
run vader --mca pml ob1 --mca btl vader,self
# pml ucx accepts only RDMA transports by default (opal_common_ucx_tls): allow shared memory and tcp.
run ucx --mca pml ucx --mca opal_common_ucx_tls any --mca opal_common_ucx_devices any
printf '%10s | %9s %9s %9s | %10s %10s %10s | %6s %6s | %6s %6s\n' size \
  "ufi us" "vader us" "ucx us" "ufi MB/s" "vader MB/s" "ucx MB/s" \
  "lat/v" "lat/u" "bw/v" "bw/u"
paste "$out/ufi" "$out/vader" "$out/ucx" | awk '{
  printf "%10d | %9.3f %9.3f %9.3f | %10.1f %10.1f %10.1f | %6.2f %6.2f | %6.2f %6.2f\n",
    $1, $2, $5, $8, $3, $6, $9, $2/$5, $2/$8, $3/$6, $3/$9 }'
