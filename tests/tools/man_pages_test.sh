#!/usr/bin/env bash
# The man pages the build wrote (docs/man): each renders without a warning (groff -ww, and
# man -l where man is installed), and fi_ufi(7) names every variable of the config registry.
#   man_pages_test.sh <ufi_info> <page>...
set -uo pipefail
ufi_info=$1
shift
fail=0
if ! command -v groff >/dev/null; then
  echo "SKIP: groff is not installed"
  exit 77
fi
for page in "$@"; do
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || { echo "FAIL: groff warns on $(basename "$page"):"; echo "$warnings"; fail=1; }
  if command -v man >/dev/null; then
    warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$warnings" ] || { echo "FAIL: man -l warns on $(basename "$page"):"; echo "$warnings"; fail=1; }
  fi
  lines=$(groff -man -Tutf8 "$page" 2>/dev/null | wc -l)
  [ "$lines" -gt 20 ] || { echo "FAIL: $(basename "$page") renders to $lines lines"; fail=1; }
done
fi_ufi=""
for page in "$@"; do [ "$(basename "$page")" = fi_ufi.7 ] && fi_ufi=$page; done
[ -n "$fi_ufi" ] || { echo "FAIL: fi_ufi.7 not given"; exit 1; }
names=$(UFI_LOG_LEVEL=off "$ufi_info" -c --json | python3 -c \
  'import json,sys; print("\n".join(v["name"] for v in json.load(sys.stdin)["config"] if not v["dynamic"]))')
[ -n "$names" ] || { echo "FAIL: ufi_info -c --json gave no variables"; exit 1; }
rendered=$(groff -man -Tascii "$fi_ufi" 2>/dev/null | col -b 2>/dev/null || groff -man -Tascii "$fi_ufi")
for n in $names; do
  grep -q -- "$n" <<<"$rendered" || { echo "FAIL: fi_ufi(7) does not describe $n"; fail=1; }
done
[ $fail -eq 0 ] && echo "PASS: $# pages render cleanly; fi_ufi(7) describes all $(wc -w <<<"$names") variables"
exit $fail
