#!/usr/bin/env bash
# ufi_perf between hosts of the multi-host test bed (testbed.sh), default transport
# selection: tagged latency and bandwidth from host 2 to host 1, then host 1 serving hosts 2
# and 3 at once (a server process per client), every run completing with all its sizes. The
# figures are printed, never asserted (veth on a loaded 2-core machine says nothing of speed).
# Usage: perf_multihost.sh <ufi_perf>   (77 = skipped)
set -uo pipefail
perf=$1
. "$(dirname "$0")/testbed.sh"
mh_up 3

fail() { echo "FAIL: $*"; exit 1; }

# ufi_perf test $1 with sizes $2: server on host $3 (port $4), client on host $5. Checks that
# the client printed a row per size.
pair() {
  local test=$1 sizes=$2 sh=$3 port=$4 ch=$5 log="$mh_dir/perf-$3-$5-$1.log"
  mh_on "$sh" timeout 120 "$perf" -t "$test" -s "$sizes" -n 2000 -w 200 -p "$port" >/dev/null 2>&1 &
  local server=$!
  sleep 0.3
  mh_on "$ch" timeout 120 "$perf" -t "$test" -s "$sizes" -n 2000 -w 200 -p "$port" "$(mh_addr "$sh")" >"$log" 2>&1
  local crc=$?
  wait "$server"; local src=$?
  [ "$crc" -eq 0 ] && [ "$src" -eq 0 ] || { cat "$log"; fail "$test host $sh <- host $ch: client exit $crc, server exit $src"; }
  local want rows
  want=$(tr ',' '\n' <<<"$sizes" | wc -l)
  rows=$(grep -cE '^ *[0-9]+ +[0-9]+ ' "$log")
  [ "$rows" -eq "$want" ] || { cat "$log"; fail "$test host $sh <- host $ch: $rows of $want sizes"; }
  echo "ok: $test host $sh <- host $ch"
  grep -E '^ *[0-9]+ +[0-9]+ |^#' "$log"
}

pair tag_lat 8,4K,64K,1M 1 "$(mh_port 1)" 2
pair tag_bw 8,64K,1M 1 "$(mh_port 1)" 2
# Host 1 serves two hosts at once.
p2=$(mh_port 1)
p3=$(mh_port 1)
while [ "$p3" = "$p2" ]; do p3=$(mh_port 1); done
pair tag_bw 64K,1M 1 "$p2" 2 &
a=$!
pair tag_bw 64K,1M 1 "$p3" 3 &
b=$!
wait "$a" || fail "host 1 serving host 2 (beside host 3)"
wait "$b" || fail "host 1 serving host 3 (beside host 2)"
echo "PASS"
