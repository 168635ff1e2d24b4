#!/usr/bin/env bash
# docs/configuration.md must list every variable of the config registry (ufi_info -c).
# Usage: docs_config_test.sh <ufi_info> <docs/configuration.md>
set -uo pipefail
names=$("$1" -c --json | python3 -c 'import json,sys; print("\n".join(v["name"] for v in json.load(sys.stdin)["config"] if not v["dynamic"]))') || { echo "FAIL: ufi_info -c --json"; exit 1; }
[ -n "$names" ] || { echo "FAIL: no variables"; exit 1; }
missing=0
for n in $names; do
  grep -q "\`$n\`" "$2" || { echo "FAIL: $n is not documented in $2"; missing=1; }
done
[ "$missing" -eq 0 ] && echo "PASS: every variable is documented"
exit "$missing"
