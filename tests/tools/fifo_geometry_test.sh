#!/usr/bin/env bash
# Shared-memory FIFO geometry (transports/iface/fifo_tuning.h): with ufi's 576-byte elements a
# posix lane carries 548 bytes inline; two processes whose FIFOs are shaped differently
# (UFI_SHM_FIFO_ELEM_SIZE=0 in one) never share one: over a domain with tcp they talk over
# tcp, every message whole, and the client logs why; over shared memory alone the client's
# first send fails at once with that reason; neither side hangs nor corrupts the other.
# Drives ufi_perf (server and client on 127.0.0.1) and reads the log files.
# Usage: fifo_geometry_test.sh <ufi_perf>
set -u
perf=$1
dir=$(mktemp -d)
srv=
trap '[ -n "$srv" ] && kill $srv 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# label, server's FIFO element size, client's, then env assignments for both. Returns the
# client's exit status; the server is stopped after the client (it waits for no one).
pair() {
    local label=$1 server_elem=$2 client_elem=$3; shift 3
    local port rc
    port=$(free_port)
    env "$@" UFI_SHM_FIFO_ELEM_SIZE="$server_elem" UFI_PROTO_INFO=y UFI_LOG_LEVEL=info \
        UFI_LOG_FILE="$dir/$label-server.log" timeout 40 "$perf" -p "$port" >/dev/null 2>&1 &
    srv=$!
    sleep 0.5
    env "$@" UFI_SHM_FIFO_ELEM_SIZE="$client_elem" UFI_PROTO_INFO=y UFI_LOG_LEVEL=info \
        UFI_LOG_FILE="$dir/$label-client.log" timeout 30 \
        "$perf" -p "$port" -t tag_lat -s 8,200,540,1M -n 50 -w 2 127.0.0.1 \
        >"$dir/$label-client.out" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        wait $srv || fail "$label: the server failed"
    else
        kill $srv 2>/dev/null
        wait $srv 2>/dev/null
    fi
    srv=
    return $rc
}

# Alike: posix carries 548 bytes inline.
pair same 576 576 UFI_TLS=shm || fail "same geometry over shared memory: the ping-pong failed"
grep -q "active messages over posix/memory (short 548 B," "$dir/same-client.log" ||
    fail "no 548-byte short limit on the posix lane"
grep -q "shaped otherwise" "$dir"/same-*.log && fail "alike peers reported as shaped otherwise"

# Shaped differently, with tcp beside shared memory: tcp carries it, on both sides.
pair mixed 0 576 UFI_NET_DEVICES=lo || fail "different geometries with tcp: the ping-pong failed"
for side in server client; do
    grep -q "active messages over tcp/lo" "$dir/mixed-$side.log" ||
        fail "different geometries: the $side's lane is not tcp"
    grep -q "active messages over posix" "$dir/mixed-$side.log" &&
        fail "different geometries: the $side used posix"
done
# The client says why shared memory is not used (the server may take its lane from the
# client's request before it opens one of its own).
grep -q "FIFOs (posix.*) are shaped otherwise .*; its traffic goes over tcp/lo" "$dir/mixed-client.log" ||
    fail "different geometries: the client does not say why it left shared memory"
grep -q "^ *1048576 " "$dir/mixed-client.out" || fail "different geometries: no 1 MiB result"

# Shaped differently, shared memory alone: the client fails at once, with the reason.
start=$(date +%s)
pair shmonly 0 576 UFI_TLS=shm && fail "different geometries over shared memory alone: it ran"
[ $(( $(date +%s) - start )) -lt 25 ] || fail "different geometries over shared memory alone: not at once"
grep -q "reaches the peer (.*): the peer's shared-memory FIFOs (posix.*) are shaped otherwise" \
    "$dir/shmonly-client.log" ||
    fail "different geometries over shared memory alone: the reason is not logged"
echo "ok"
