#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz) with clang, ASan and UBSan in build-fuzz, and
# runs each for a bounded time from its seed corpus (tests/fuzz/corpus/<name>; what a run
# finds new goes to a scratch corpus, not into the repository). A crash, leak or timeout
# fails; the input that did it is left in build-fuzz/findings.
# Usage: scripts/fuzz.sh [seconds per harness, default 30] [harness...]
# docs/fuzzing.md has the longer runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(address wire getinfo)
builddir=build-fuzz
if [ ! -f "$builddir/build.ninja" ]; then
  CC=clang CXX=clang++ meson setup "$builddir" --wrap-mode=nodownload -Dwerror=true \
    -Dtests=false -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dbuildtype=debug >/dev/null
fi
targets=()
for h in "${harnesses[@]}"; do targets+=("tests/fuzz/fuzz_$h"); done
ninja -C "$builddir" "${targets[@]}"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizer/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export UFI_LOG_LEVEL=off UFI_NET_DEVICES=lo
mkdir -p "$builddir/findings"
status=0
for h in "${harnesses[@]}"; do
  scratch=$(mktemp -d)
  echo "== fuzz_$h: ${seconds} s from $(ls tests/fuzz/corpus/$h | wc -l) seeds"
  if ! "$builddir/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$builddir/findings/$h-" \
      "$scratch" "tests/fuzz/corpus/$h" 2>"$builddir/fuzz_$h.log"; then
    tail -40 "$builddir/fuzz_$h.log"
    echo "fuzz_$h FAILED (input in $builddir/findings)"
    status=1
  else
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$builddir/fuzz_$h.log" | tr '\n' ' '
    echo
  fi
  rm -rf "$scratch"
done
exit "$status"
