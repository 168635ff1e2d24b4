#!/usr/bin/env bash
# Authorization keys as a boundary between two jobs (tests/multihost/auth_job.c): a server of
# job A (key "job-a") on host 1, with a region open to remote writes and atomics; clients of
# job B (key "job-b") on host 2 and on host 1 itself (both reach the server by host and port,
# so their handshake goes over tcp; key refusals over shared memory are unit-tested:
# AvKeyTest in tests/unit/msg) try a message, a write and a fetch-add: each fails with
# FI_EACCES, and nothing of theirs reaches the server
# (no message received, the region unchanged); a client of job A on host 2 does all three.
# The server's close report (UFI_PROTO_INFO) counts the refused peers.
# Usage: auth_job_multihost.sh <auth_job program>   (77 = skipped)
set -uo pipefail
prog=$1
. "$(dirname "$0")/testbed.sh"
mh_up 2

fail() { echo "FAIL: $*"; echo "--- server"; cat "$slog"; exit 1; }

port=$(mh_port 1)
slog="$mh_dir/auth-server.log"
mh_on 1 env UFI_PROTO_INFO=y UFI_LOG_LEVEL=warn timeout 120 "$prog" server "$(mh_addr 1)" "$port" job-a 12 >"$slog" 2>&1 &
server=$!
sleep 0.5
client() {  # $1 host, $2 key, $3 value, $4 ok|refused
  local log="$mh_dir/auth-client-$1-$2.log"
  mh_on "$1" env UFI_LOG_LEVEL=error timeout 60 "$prog" client "$(mh_addr 1)" "$port" "$2" "$3" "$4" >"$log" 2>&1
  local rc=$?
  sed "s/^/  host $1, key $2: /" "$log"
  [ "$rc" -eq 0 ] || fail "a client of key $2 on host $1 (expecting $4) exited $rc"
}
client 2 job-b 1000 refused
client 1 job-b 2000 refused
client 2 job-a 100 ok
wait "$server" || fail "the server exited $?"
grep -q '^received 1 messages, region word 101$' "$slog" ||
  fail "the server saw more (or less) than job A's message, write (100) and fetch-add (+1)"
refused=$(grep -o '[0-9]* peers refused' "$slog" | cut -d' ' -f1)
[ "${refused:-0}" -ge 2 ] || fail "the server's close report counts ${refused:-no} refused peers, not 2"
echo "ok: job B refused from both hosts ($refused peers refused at the server), job A served: $(grep '^received' "$slog")"
echo "PASS"
