#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install what is missing, build ufi, and run it:
# ufi_info's summary (versions, transports, the domains fi_getinfo offers).
# The two-process ping-pong joins this script with the RDM data path.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
echo
build/tools/ufi_info
