#!/usr/bin/env bash
# Many peers: one sender and P receiver endpoints (1, 16, 64, 256) in R receiver processes of
# this host, ufi (tools/bench/many_peers.c) right after its UCP anchor in the same arrangement
# (tools/bench/many_peers_ucp.c: P receiver workers, one sender worker with P endpoints).
# Prints, per P: the sender's memory per connected peer (heap; resident set, which counts the
# peers' shared-memory FIFO pages the sender touched, though they are the peers')
# and the 8-byte message rate round-robin over the P peers, for each side; ufi/UCP ratios;
# and each side's rate against its own rate with one peer (P = 1, measured first).
# A benchmark, not a test.
#   scripts/bench-peers.sh [build-dir] [runs] [messages] [receiver processes]
# Traffic stays on this host (UFI_NET_DEVICES=lo, UCX_NET_DEVICES=lo).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-2}
messages=${3:-1000000}
procs=${4:-1}
ufi="$build/tools/bench/many_peers"
ucp="$build/tools/bench/many_peers_ucp"
[ -x "$ufi" ] && [ -x "$ucp" ] || { echo "build first (scripts/build.sh)" >&2; exit 2; }
export UFI_NET_DEVICES=lo UCX_NET_DEVICES=lo
field() { sed -n "s/.* $1=\([-0-9.]*\).*/\1/p"; }
printf '%3s %5s | %9s %9s %9s | %9s %9s %9s | %7s %7s | %7s %7s\n' run peers \
  ucp_heap ucp_rss ucp_Mmsg ufi_heap ufi_rss ufi_Mmsg \
  heap_r rate_r ucp/P1 ufi/P1
for r in $(seq "$runs"); do
  base_ucp="" base_ufi=""
  for p in 1 16 64 256; do
    u=$(timeout 300 "$ucp" "$p" "$procs" "$messages")
    f=$(timeout 300 "$ufi" "$p" "$procs" "$messages")
    uh=$(echo "$u" | field heap_per_peer_bytes)
    ur=$(echo "$u" | field rss_per_peer_bytes); um=$(echo "$u" | field "rate_${p}_peers_mmsgs")
    fh=$(echo "$f" | field heap_per_peer_bytes)
    fr=$(echo "$f" | field rss_per_peer_bytes); fm=$(echo "$f" | field "rate_${p}_peers_mmsgs")
    [ "$p" = 1 ] && base_ucp=$um base_ufi=$fm
    awk -v r="$r" -v p="$p" -v uh="$uh" -v ur="$ur" -v um="$um" -v fh="$fh" \
        -v fr="$fr" -v fm="$fm" -v bu="$base_ucp" -v bf="$base_ufi" 'BEGIN {
      printf "%3d %5d | %9s %9s %9s | %9s %9s %9s | %7.2f %7.2f | %7.2f %7.2f\n",
        r, p, uh, ur, um, fh, fr, fm, fh / uh, fm / um, um / bu, fm / bf }'
  done
done
