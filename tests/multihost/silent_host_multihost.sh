#!/usr/bin/env bash
# A host that goes silent is detected within UFI_PEER_TIMEOUT, and a peer process that is
# merely stopped is not (tests/multihost/silent_host.c: a tagged ping-pong with directed
# receives and an EQ, between two hosts of the test bed, testbed.sh, over tcp):
#   1. the server process is stopped (SIGSTOP) for twice the timeout while the client waits
#      on it: its kernel still acknowledges, nothing fails, and the ping-pong goes on after
#      SIGCONT;
#   2. host 2's switch port goes down for good mid-ping-pong: both sides' waits fail (an error
#      completion or an EQ error event) within the timeout plus two check intervals and a
#      margin for this loaded machine.
# Usage: silent_host_multihost.sh <silent_host program>   (77 = skipped)
set -uo pipefail
prog=$1
. "$(dirname "$0")/testbed.sh"
mh_up 2

fail() { echo "FAIL: $*"; echo "--- server"; cat "$slog"; echo "--- client"; cat "$clog"; exit 1; }
# The latest round count a side printed (0 before any).
rounds_in() { local n; n=$(grep '^rounds ' "$1" 2>/dev/null | tail -1 | cut -d' ' -f2); echo "${n:-0}"; }
# Waits (at most $3 s) until log $1 shows at least $2 rounds.
await_rounds() {
  local deadline=$((SECONDS + $3))
  until [ "$(rounds_in "$1")" -ge "$2" ]; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

timeout_ms=4000
interval_ms=1000
bound_s=$(( (timeout_ms + 2 * interval_ms) / 1000 + 4 ))
port=$(mh_port 1)
slog="$mh_dir/silent-server.log" clog="$mh_dir/silent-client.log"
env_vars=(UFI_PEER_TIMEOUT=$timeout_ms UFI_PEER_CHECK_INTERVAL=$interval_ms UFI_LOG_LEVEL=warn)
mh_on 1 env "${env_vars[@]}" timeout 300 "$prog" server "$(mh_addr 1)" "$port" 1000000000 >"$slog" 2>&1 &
server=$!
sleep 0.3
mh_on 2 env "${env_vars[@]}" timeout 300 "$prog" client "$(mh_addr 1)" "$port" 1000000000 >"$clog" 2>&1 &
client=$!
await_rounds "$clog" 2000 60 || fail "the ping-pong did not start"
server_pid=$(pgrep -f "^$prog server") || fail "no server process"

# 1. A stopped process is no dead host.
kill -STOP "$server_pid"
sleep $(( 2 * timeout_ms / 1000 ))
kill -CONT "$server_pid"
before=$(rounds_in "$clog")
await_rounds "$clog" $((before + 2000)) 60 || fail "the ping-pong did not go on after the server was stopped for $((2 * timeout_ms)) ms"
kill -0 "$client" 2>/dev/null && kill -0 "$server" 2>/dev/null || fail "a side ended while its peer was only stopped"
echo "ok: the server stopped for $((2 * timeout_ms)) ms, nothing failed, $(rounds_in "$clog") rounds"

# 2. The link goes down for good.
t0=$(date +%s.%N)
ip -n "$mh_prefix-sw" link set p2 down
deadline=$((SECONDS + bound_s + 30))
for pid in "$client" "$server"; do
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
done
t1=$(date +%s.%N)
kill -0 "$client" 2>/dev/null && fail "the client still waits $((bound_s + 30)) s after the link went down"
kill -0 "$server" 2>/dev/null && fail "the server still waits $((bound_s + 30)) s after the link went down"
wait "$client"; crc=$?
wait "$server"; src=$?
elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
[ "$crc" -eq 3 ] && [ "$src" -eq 3 ] || fail "exits $crc (client) and $src (server), not 3 (the peer failed)"
awk -v e="$elapsed" -v b="$bound_s" 'BEGIN { exit !(e <= b) }' || fail "the peers failed after ${elapsed} s, beyond ${bound_s} s"
echo "ok: link down, both sides failed the peer within ${elapsed} s (UFI_PEER_TIMEOUT=${timeout_ms} ms):"
echo "  server: $(grep '^round ' "$slog" | tail -1)"
echo "  client: $(grep '^round ' "$clog" | tail -1)"
echo "PASS"
