#!/usr/bin/env bash
# ufi_info end to end: every report prints readable text and valid JSON; -f honours its
# hints and explains -FI_ENODATA; bad options give usage and a non-zero exit.
# Usage: ufi_info_test.sh <path to ufi_info>
set -uo pipefail
ufi_info=$1
fail() { echo "FAIL: $*"; exit 1; }
json_ok() { python3 -c 'import json,sys; json.load(sys.stdin)' || return 1; }

out=$("$ufi_info") || fail "summary failed"
grep -q "^ufi " <<<"$out" || fail "summary lacks the version line: $out"
grep -q "domains, in fi_getinfo order" <<<"$out" || fail "summary lacks domains: $out"

out=$("$ufi_info" -v) || fail "-v failed"
for w in "ufi" "libfabric API" "ucx" "hwloc"; do grep -q "^$w " <<<"$out" || fail "-v lacks $w: $out"; done
grep -q "libfabric API *2.7" <<<"$out" || fail "-v API version: $out"

out=$("$ufi_info" -d) || fail "-d failed"
for w in "Memory domain: posix" "Transport: posix" "Transport: tcp" "Device: lo" "am_short_max" \
         "latency_ns" "bandwidth_shared_MBps" "capabilities"; do
  grep -q "$w" <<<"$out" || fail "-d lacks '$w'"
done

out=$("$ufi_info" -c) || fail "-c failed"
grep -q "^UFI_TLS=all$" <<<"$out" || fail "-c lacks UFI_TLS=all"
grep -q "^FI_LOG_LEVEL=" <<<"$out" || fail "-c lacks FI_LOG_LEVEL"
out=$(UFI_TLS=shm "$ufi_info" -c) || fail "-c with UFI_TLS failed"
grep -q "^UFI_TLS=shm$" <<<"$out" || fail "-c does not show the value in effect"
grep -q "set in the environment" <<<"$out" || fail "-c does not mark set variables"

out=$("$ufi_info" -t) || fail "-t failed"
grep -q "Process bound to CPUs\|hwloc topology unavailable" <<<"$out" || fail "-t lacks the binding: $out"
grep -q "UCT network devices" <<<"$out" || fail "-t lacks UCT devices: $out"

out=$("$ufi_info" -f) || fail "-f failed"
grep -q "provider: ufi" <<<"$out" || fail "-f lacks entries: $out"
grep -q "transports: " <<<"$out" || fail "-f lacks transports: $out"
out=$("$ufi_info" -f -p ufi -e FI_EP_RDM -l) || fail "-f -l failed"
grep -q "fi_domain_attr:" <<<"$out" || fail "-f -l lacks attributes"

# No match: exit 1 and the reasons, one per domain.
# (FI_EP_MSG needs tcp: shared memory alone offers none.)
out=$(UFI_TLS=shm "$ufi_info" -f -e FI_EP_MSG); rc=$?
[ "$rc" -eq 1 ] || fail "-f -e FI_EP_MSG exit $rc"
grep -q "FI_EP_MSG: connections are made over tcp" <<<"$out" || fail "no MSG reason: $out"
grep -q "fi_getinfo: -61" <<<"$out" || fail "no -61: $out"
grep -q "ep_type FI_EP_MSG not offered" <<<"$out" || fail "no reason: $out"
out=$("$ufi_info" -f -c "FI_TAGGED|FI_COLLECTIVE"); rc=$?
[ "$rc" -eq 1 ] && grep -q "caps FI_COLLECTIVE not offered" <<<"$out" || fail "caps reason missing: $out"
out=$("$ufi_info" -f -p tcp); rc=$?
[ "$rc" -eq 1 ] && grep -q "hints ask for provider \"tcp\"" <<<"$out" || fail "provider reason missing: $out"
out=$(UFI_TLS=^tcp "$ufi_info" -f -c FI_REMOTE_COMM); rc=$?
[ "$rc" -eq 1 ] && grep -q "FI_REMOTE_COMM" <<<"$out" || fail "UFI_TLS=^tcp should leave no remote domain: $out"
out=$(UFI_TLS=^tcp "$ufi_info" -f) || fail "UFI_TLS=^tcp -f failed"
# One domain, shm, listed for each endpoint type it offers (RDM, then DGRAM; MSG needs tcp).
[ "$(grep -c 'domain: shm' <<<"$out")" -eq 2 ] && [ "$(grep -c 'domain:' <<<"$out")" -eq 2 ] &&
  [ "$(grep 'type:' <<<"$out" | tr -d ' ' | tr '\n' ,)" = "type:FI_EP_RDM,type:FI_EP_DGRAM," ] ||
  fail "UFI_TLS=^tcp: $out"

# JSON for every report.
for args in "" "-v" "-d" "-c" "-t" "-f" "-v -d --config -t -f" "-f -c FI_COLLECTIVE"; do
  # shellcheck disable=SC2086
  json=$("$ufi_info" $args --json)  # exit 1 when -f finds nothing; the JSON says so
  echo "$json" | json_ok || fail "invalid JSON for '$args --json'"
done
("$ufi_info" -f -c FI_COLLECTIVE --json; true) | python3 -c '
import json, sys
d = json.load(sys.stdin)["fi_info"]
assert d["status"] == -61, d
assert d["entries"] == [], d
assert any("FI_COLLECTIVE" in r for r in d["reasons"]), d
' || fail "-f --json no-match content"
"$ufi_info" -f --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["fi_info"]
assert d["status"] == 0 and d["entries"], d
e = d["entries"][0]
assert e["provider"] == "ufi" and e["type"] == "FI_EP_RDM" and e["inject_size"] > 0, e
assert e["mr_key_size"] == 8, e
' || fail "-f --json content"
"$ufi_info" -d --json | python3 -c '
import json, sys
d = json.load(sys.stdin)["transports"]
names = {r["name"] for r in d if r["kind"] == "transport"}
assert "posix/memory" in names and "tcp/lo" in names, names
' || fail "-d --json content"

# Bad options: usage on stderr, exit 2.
for args in "--bogus" "-x" "-p ufi" "-f -e" "-f -e FI_EP_WHAT" "-f -c FI_NOPE" "-f -c -t" "-f -c FI_NOPE --json"; do
  # shellcheck disable=SC2086
  err=$("$ufi_info" $args 2>&1 >/dev/null); rc=$?
  [ "$rc" -eq 2 ] || fail "'$args' exit $rc (want 2)"
  [ -n "$err" ] || fail "'$args' printed nothing on stderr"
done
grep -q "Usage: ufi_info" <<<"$("$ufi_info" -h)" || fail "-h"
echo "PASS: ufi_info"
