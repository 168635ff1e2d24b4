#!/usr/bin/env bash
# Registration-cache hit (fi_mr_reg + fi_close of one cached 4 KiB buffer) on ufi beside
# libfabric's shm provider, alternating in one run: tools/bench/mr_hit_min.c built once against
# ufi (build/tools/bench/mr_hit_min) and once, here, against Debian's libfabric.so.1 with ufi's
# headers (the ABI is the same; libfabric-dev is not needed). Prints each run's fastest round
# and the ratio ufi / shm. A benchmark, not a test.
#   scripts/bench-mr.sh [build-dir] [runs] [rounds-per-run]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-5}
rounds=${3:-15}
ufi="$build/tools/bench/mr_hit_min"
[ -x "$ufi" ] || { echo "no $ufi: build first (scripts/build.sh)" >&2; exit 2; }
sys=$(ls /usr/lib/*/libfabric.so.1 2>/dev/null | head -1)
[ -n "$sys" ] || { echo "no system libfabric.so.1 (package libfabric1)" >&2; exit 2; }
anchor=$(mktemp)
trap 'rm -f "$anchor"' EXIT
cc -O2 -o "$anchor" tools/bench/mr_hit_min.c -Iinclude "$sys"
ns() { sed -n 's/.*: \([0-9.]*\) ns$/\1/p'; }
printf '%4s %10s %10s %7s\n' run shm_ns ufi_ns ratio
for i in $(seq "$runs"); do
  s=$(FI_PROVIDER=shm "$anchor" "$rounds" | ns)
  u=$("$ufi" "$rounds" | ns)
  awk -v i="$i" -v s="$s" -v u="$u" 'BEGIN { printf "%4d %10s %10s %7.2f\n", i, s, u, u / s }'
done
