#!/usr/bin/env bash
# fi_av_lookup of random entries on ufi beside libfabric's tcp provider, alternating in one
# run, at 1,000, 100,000 and 1,000,000 entries: tools/bench/av_lookup_min.c built once against
# ufi (build/tools/bench/av_lookup_min) and once, here, against Debian's libfabric.so.1 with
# ufi's headers (the ABI is the same). Both AVs hold FI_SOCKADDR_IN addresses (16 bytes each),
# the format libfabric's tcp provider stores natively; ufi's own format (64-byte names) is
# measured beside them. Prints each run's fastest round and the ratios. A benchmark, not a test.
#   scripts/bench-av.sh [build-dir] [runs] [rounds-per-run]
# Nothing is sent (addresses are only stored); ufi's domain is the loopback one.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-3}
rounds=${3:-5}
ufi="$build/tools/bench/av_lookup_min"
[ -x "$ufi" ] || { echo "no $ufi: build first (scripts/build.sh)" >&2; exit 2; }
sys=$(ls /usr/lib/*/libfabric.so.1 2>/dev/null | head -1)
[ -n "$sys" ] || { echo "no system libfabric.so.1 (package libfabric1)" >&2; exit 2; }
export UCX_NET_DEVICES=lo FI_TCP_IFACE=lo UFI_NET_DEVICES=lo
anchor=$(mktemp)
trap 'rm -f "$anchor"' EXIT
cc -O2 -o "$anchor" tools/bench/av_lookup_min.c -Iinclude "$sys"
ns() { sed -n 's/.*: \([0-9.]*\) ns$/\1/p'; }
printf '%4s %9s | %9s %9s %7s | %11s %7s\n' run entries tcp_ns ufi_ns ufi/tcp ufi_native ufi/tcp
for i in $(seq "$runs"); do
  for n in 1000 100000 1000000; do
    t=$(FI_PROVIDER=tcp "$anchor" "$n" "$rounds" | ns)
    u=$("$ufi" "$n" "$rounds" | ns)
    un=$("$ufi" "$n" "$rounds" native | ns)
    awk -v i="$i" -v n="$n" -v t="$t" -v u="$u" -v un="$un" 'BEGIN {
      printf "%4d %9d | %9s %9s %7.2f | %11s %7.2f\n", i, n, t, u, u / t, un, un / t }'
  done
done
