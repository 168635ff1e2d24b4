#!/usr/bin/env bash
# Runs every test: unit, ABI, layer rules, integration, compat, MPI, soak and multi-host tests in a
# normal build, then the unit, ABI, integration and soak tests again in an ASan+UBSan build, the
# threaded tests in a ThreadSanitizer build, then each libFuzzer harness for a bounded time
# (clang). Installs what is
# missing first, so it works on a fresh Debian 12 machine (CI runs exactly this).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs=$(nproc 2>/dev/null || echo 2)
status=0

echo "== build (debugoptimized) and all tests"
scripts/build.sh build
meson test -C build --print-errorlogs --num-processes "$jobs" || status=1

echo "== ASan+UBSan build: unit, abi, integration, tools and soak tests"
scripts/build.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug
# UCX keeps some process-lifetime allocations (component lists, config tables) that
# LeakSanitizer reports at exit; tests/sanitizer/lsan.supp names them.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
meson test -C build-asan --print-errorlogs --num-processes "$jobs" \
  --suite unit --suite abi --suite integration --suite tools --suite soak || status=1

echo "== ThreadSanitizer build: the threaded tests (docs/sanitizers.md)"
scripts/tsan.sh || status=1

echo "== libFuzzer harnesses (clang, ASan+UBSan): ${UFI_FUZZ_SECONDS:-20} s each (docs/fuzzing.md)"
scripts/fuzz.sh "${UFI_FUZZ_SECONDS:-20}" || status=1

if [ "$status" -eq 0 ]; then echo "== all tests passed"; else echo "== some tests FAILED"; fi
exit "$status"
