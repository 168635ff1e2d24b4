#!/usr/bin/env bash
# UFI_PROTO_INFO=y prints each peer's protocols and each endpoint's traffic at close whatever
# the log level (as UCX_PROTO_INFO does), here with UFI_LOG_LEVEL=warn; without it, nothing of
# the kind is printed at that level. Drives ufi_perf (server and client on 127.0.0.1).
# Usage: proto_info_level_test.sh <ufi_perf>
set -u
perf=$1
dir=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill $srv 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*; do echo "--- $f"; cat "$f"; done; exit 1; }
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
run() {  # label, then env assignments for both sides
    local label=$1 port; shift
    port=$(free_port)
    env "$@" UFI_LOG_LEVEL=warn timeout 40 "$perf" -p "$port" >"$dir/$label-server.out" 2>&1 &
    srv=$!
    sleep 0.5
    env "$@" UFI_LOG_LEVEL=warn timeout 30 "$perf" -p "$port" -t tag_lat -s 8 -n 50 -w 2 127.0.0.1 \
        >"$dir/$label-client.out" 2>&1 || fail "$label: the client failed"
    wait $srv || fail "$label: the server failed"
    srv=
}
run asked UFI_PROTO_INFO=y
grep -q "protocols to peer" "$dir/asked-client.out" || fail "UFI_PROTO_INFO=y at warn printed no protocol line"
grep -q "endpoint closed:" "$dir/asked-client.out" || fail "UFI_PROTO_INFO=y at warn printed no close counts"
run quiet UFI_PROTO_INFO=n
if grep -q "protocols to peer\|endpoint closed:" "$dir/quiet-client.out"; then
    fail "without UFI_PROTO_INFO the warn level printed protocol lines"
fi
echo "PASS: UFI_PROTO_INFO prints without a log level of its own"
