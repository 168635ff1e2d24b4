#!/usr/bin/env bash
# A link that goes down and comes back mid-transfer loses and duplicates nothing: Debian's
# fi_pingpong (every size, data checks) between two hosts of the test bed (testbed.sh) while
# host 2's switch port is down for 3 s, twice (RDM, then MSG). tcp retransmits what was in
# flight once the link is back; ufi must neither fail the peer nor deliver twice.
# Usage: flap_multihost.sh <compat dir>   (77 = skipped)
set -uo pipefail
compat_dir=$1
. "$(dirname "$0")/testbed.sh"
command -v fi_pingpong >/dev/null || mh_skip "fi_pingpong not installed (apt-get install libfabric-bin)"
mh_up 2

fail() { echo "FAIL: $*"; exit 1; }
# Rows the client has printed so far (0 before its log exists).
rows_in() { local n; n=$(grep -c ' =' "$1" 2>/dev/null); echo "${n:-0}"; }

for type in rdm msg; do
  port=$(mh_port 1)
  slog="$mh_dir/server-$type.log" clog="$mh_dir/client-$type.log"
  mh_on 1 env LD_LIBRARY_PATH="$compat_dir" timeout 120 \
    fi_pingpong -p ufi -e "$type" -m tagged -S all -I 50 -c -B "$port" >"$slog" 2>&1 &
  server=$!
  sleep 0.3
  # (Line-buffered: the client's rows tell how far it got.)
  mh_on 2 env LD_LIBRARY_PATH="$compat_dir" timeout 120 stdbuf -oL \
    fi_pingpong -p ufi -e "$type" -m tagged -S all -I 50 -c -P "$port" "$(mh_addr 1)" >"$clog" 2>&1 &
  client=$!
  # The flap, once the pair is well into its sizes (bounded wait).
  deadline=$((SECONDS + 60))
  until [ "$(rows_in "$clog")" -ge 20 ] || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.05; done
  ip -n "$mh_prefix-sw" link set p2 down
  down_at=$(rows_in "$clog")
  sleep 3
  ip -n "$mh_prefix-sw" link set p2 up
  wait "$client"; crc=$?
  wait "$server"; src=$?
  rows=$(rows_in "$clog")
  if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ] || [ "$rows" -lt 46 ]; then
    echo "--- server"; cat "$slog"; echo "--- client"; cat "$clog"
    fail "-e $type across a 3 s link flap: client exit $crc, server exit $src, $rows sizes"
  fi
  [ "$down_at" -ge 20 ] && [ "$down_at" -lt 46 ] || fail "-e $type: the link went down after $down_at sizes, not mid-transfer; the test proves nothing"
  echo "ok: -e $type, every size checked, link down for 3 s after $down_at of $rows sizes"
done
echo "PASS"
