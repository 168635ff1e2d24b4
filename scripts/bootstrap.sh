#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install what is missing, build ufi, and run it:
# ufi_info's summary (versions, transports, the domains fi_getinfo offers), then a two-process
# ping-pong (ufi_perf tag_lat, server and client on 127.0.0.1) over the default transports.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
echo
build/tools/ufi_info
echo
port=$((20000 + RANDOM % 20000))
build/tools/ufi_perf -p "$port" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
build/tools/ufi_perf -p "$port" -t tag_lat -s 8,1K,64K -n 10000 127.0.0.1
wait "$server"
trap - EXIT
