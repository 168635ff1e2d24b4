#!/usr/bin/env bash
# Configures (once) and builds ufi in a build directory: scripts/build.sh [BUILD_DIR] [meson options...]
# The project's own builds (this script, so scripts/test.sh and .ci/run) treat warnings as
# errors; meson.build does not default to it, so that distribution builds do not.
set -euo pipefail
cd "$(dirname "$0")/.."
builddir="${1:-build}"; shift || true
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" --wrap-mode=nodownload -Dwerror=true "$@"
fi
ninja -C "$builddir"
