#!/usr/bin/env bash
# UFI_PROTO_INFO=y logs, per peer, the AM lane and its limits, the rendezvous protocol, its
# transport and threshold (and where both sides copy, from what size); without it, nothing of
# that at info level. Drives a ping-pong with
# ufi_perf (server and client on 127.0.0.1) and reads the log files.
# Usage: proto_info_test.sh <ufi_perf>
set -u
perf=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }

# A port free now (the kernel's pick): fixed ports in the ephemeral range collide with the
# ports other tests' tcp transports listen on.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

run() {  # label, then env assignments; a second try on a fresh port if the first one fails
    local label=$1; shift
    local try port srv
    for try in 1 2; do
        port=$(free_port)
        env "$@" UFI_LOG_LEVEL=info UFI_LOG_FILE="$dir/$label-server.log" \
            timeout 30 "$perf" -p "$port" >/dev/null 2>&1 &
        srv=$!
        sleep 0.5
        if env "$@" UFI_LOG_LEVEL=info UFI_LOG_FILE="$dir/$label-client.log" \
            timeout 30 "$perf" -p "$port" -t tag_lat -s 8,1M -n 20 -w 2 127.0.0.1 >/dev/null 2>&1 &&
            wait $srv; then
            return 0
        fi
        kill $srv 2>/dev/null
        wait $srv 2>/dev/null
        rm -f "$dir/$label-server.log" "$dir/$label-client.log"
    done
    fail "$label: the ping-pong failed twice"
}

run on UFI_PROTO_INFO=y UFI_TLS=shm
grep -q "protocols to peer .*active messages over posix/memory (short [0-9]* B, bcopy [0-9]* B, zero-copy 0 B); messages above [0-9]* B by rendezvous .*; RMA zero copy from [0-9]* B" \
    "$dir/on-client.log" || fail "no protocol line with UFI_PROTO_INFO=y (shm)"
# Where the rendezvous reads over cma (cross-process copy permitted), both sides copy the 1 MiB
# messages (SPLIT, UFI_RNDV_SPLIT's default 64K), and the close line counts them.
if grep -q "by rendezvous GET over cma/" "$dir/on-client.log"; then
    grep -q "by rendezvous GET over cma/[^;]*, copied by both sides from 65536 B;" "$dir/on-client.log" ||
        fail "no SPLIT threshold on the GET over cma"
    grep -q "([1-9][0-9]* get ([1-9][0-9]* copied by both sides)" "$dir/on-client.log" ||
        fail "the 1 MiB receives were not copied by both sides"
fi
run nosplit UFI_PROTO_INFO=y UFI_TLS=shm UFI_RNDV_SPLIT=off
grep -q "copied by both sides from" "$dir/nosplit-client.log" && fail "SPLIT with UFI_RNDV_SPLIT=off"
grep -q "([0-9]* get ([1-9][0-9]* copied by both sides)" "$dir/nosplit-client.log" &&
    fail "receives copied by both sides with UFI_RNDV_SPLIT=off"
run tcp UFI_PROTO_INFO=y UFI_TLS=tcp UFI_NET_DEVICES=lo
grep -q "protocols to peer .*active messages over tcp/lo (.*zero-copy [1-9][0-9]* B).* by rendezvous PUT over tcp/lo; RMA zero copy from [0-9]* B" \
    "$dir/tcp-client.log" || fail "no tcp protocol line"
run off UFI_TLS=shm
grep -q "protocols to peer" "$dir/off-client.log" && fail "protocol lines without UFI_PROTO_INFO"
echo "ok"
