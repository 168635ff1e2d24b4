#!/usr/bin/env bash
# Configures (once) and builds ufi in a build directory: scripts/build.sh [BUILD_DIR] [meson options...]
set -euo pipefail
cd "$(dirname "$0")/.."
builddir="${1:-build}"; shift || true
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" --wrap-mode=nodownload "$@"
fi
ninja -C "$builddir"
