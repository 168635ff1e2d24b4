#!/usr/bin/env bash
# Self-test of scripts/check-layers.sh on fixture trees it writes itself: a tree that keeps the
# rules passes; each violation (a quoted include across layers, a UCX or hwloc header included
# outside transports/, however the #include is spaced, or reached through a transports/ header
# the layers above include) makes it fail and name the file.
# Usage: check_layers_test.sh <scripts/check-layers.sh>
set -uo pipefail
check=$1
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
failures=0 passes=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A tree that keeps every rule.
good_tree() {  # good_tree <dir>
  mkdir -p "$1"/{api,base/config,base/log,include/rdma,runtime/mr,transports/memory,tools/ufi_info,tools/ufi_perf,tools/bench}
  printf '#include "tools/ufi_perf/group_ucp.h"\n#include <ucp/api/ucp.h>\n' >"$1/tools/ufi_perf/group_ucp.cpp"
  printf '#include <ucp/api/ucp.h>\n#include <stdio.h>\n' >"$1/tools/bench/many_peers_ucp.c"
  printf '#include <rdma/fabric.h>\n' >"$1/tools/bench/many_peers.c"
  printf '#pragma once\n#include "base/intrusive_list.h"\n#include <memory>\n' >"$1/base/pool.h"
  printf '#pragma once\n#include <rdma/fi_errno.h>\n#include <stdint.h>\n' >"$1/include/rdma/fabric.h"
  printf '#include "base/config/parse.h"\n#include <string>\n' >"$1/base/config/registry.cpp"
  printf '#include "runtime/mr/mr.h"\n#include <rdma/fabric.h>\n' >"$1/api/mr.cpp"
  printf '#include "transports/memory/registration.h"\n#include "base/log/log.h"\n#include <vector>\n' >"$1/runtime/mr/mr.cpp"
  printf '#pragma once\n#include "transports/status.h"\n' >"$1/runtime/mr/mr.h"
  printf '#include "base/config/config.h"\n#include <spdlog/spdlog.h>\n' >"$1/base/log/output.cpp"
  printf '#include <uct/api/uct.h>\n#include <ucs/type/status.h>\n#include <ucm/api/ucm.h>\n#include <hwloc.h>\n#include <hwloc/linux.h>\n#include "base/log/log.h"\n' >"$1/transports/memory/registration.cpp"
  printf '#include "tools/ufi_info/reports.h"\n#include <ufi/ufi_ext.h>\n#include <nlohmann/json.hpp>\n' >"$1/tools/ufi_info/main.cpp"
}

good_tree "$tmp/good"
if out=$("$check" "$tmp/good"); then passes=$((passes + 1)); else fail "a good tree was rejected: $out"; fi

# <case name> <file> <line to add>: each must be rejected, naming the file.
cases=(
  "uct-in-runtime|runtime/info/offers.cpp|#include <uct/api/uct.h>"
  "ucs-in-runtime-header|runtime/ucs_status.h|#include <ucs/type/status.h>"
  "hwloc-in-runtime|runtime/diag/report.cpp|#include <hwloc.h>"
  "hwloc-subdir-in-runtime|runtime/diag/report.cpp|#include <hwloc/linux.h>"
  "ucm-in-service-layer|base/config/global.cpp|#include <ucm/api/ucm.h>"
  "ucs-in-log|base/log/output.cpp|#include <ucs/debug/log.h>"
  "uct-in-api|api/domain.cpp|#include <uct/api/uct.h>"
  "hwloc-in-tools|tools/ufi_info/main.cpp|#include <hwloc.h>"
  "ucp-in-tools|tools/ufi_info/main.cpp|#include <ucp/api/ucp.h>"
  "ucp-in-runtime|runtime/mr/mr.cpp|#include <ucp/api/ucp.h>"
  "ucp-in-ufi-benchmark|tools/bench/many_peers.c|#include <ucp/api/ucp.h>"
  "ucp-in-transports|transports/memory/registration.cpp|#include <ucp/api/ucp.h>"
  "spaced-directive|runtime/mr/mr.cpp|  #  include   <uct/api/uct.h>"
  "spaced-brackets|runtime/mr/mr.cpp|#include < ucs/type/status.h >"
  "quoted-api-from-runtime|runtime/mr/mr.cpp|#include \"api/objects.h\""
  "quoted-runtime-from-transports|transports/memory/registration.cpp|#include \"runtime/mr/mr.h\""
  "quoted-base-from-tools|tools/ufi_info/main.cpp|#include \"base/log/log.h\""
  "log-from-config|base/config/registry.cpp|#include \"base/log/log.h\""
  "transports-from-base|base/pool.h|#include \"transports/status.h\""
  "runtime-from-log|base/log/output.cpp|#include \"runtime/mr/mr.h\""
  "project-from-public-header|include/rdma/fabric.h|#include \"runtime/mr/mr.h\""
  "uct-in-public-header|include/rdma/fabric.h|#include <uct/api/uct.h>"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name file line <<<"$c"
  dir="$tmp/$name"
  good_tree "$dir"
  mkdir -p "$(dirname "$dir/$file")"
  printf '%s\n' "$line" >>"$dir/$file"
  out=$("$check" "$dir"); rc=$?
  if [ "$rc" -ne 1 ]; then fail "$name: exit $rc (want 1): $out"; continue; fi
  grep -q "layer violation: $file includes" <<<"$out" || { fail "$name: the violation is not named: $out"; continue; }
  [ "$(grep -c '^layer violation' <<<"$out")" -eq 1 ] || { fail "$name: other lines reported: $out"; continue; }
  passes=$((passes + 1))
done

# Two folders that include each other: one violation naming both (and a file of each).
dir="$tmp/cycle"
good_tree "$dir"
mkdir -p "$dir/runtime/cq" "$dir/runtime/cntr"
printf '#pragma once\n#include "runtime/cq/cq.h"\n' >"$dir/runtime/cntr/cntr.h"
printf '#pragma once\n#include "runtime/mr/mr.h"\n' >"$dir/runtime/cq/cq.h"
if out=$("$check" "$dir"); then passes=$((passes + 1)); else fail "cycle: a one-way include was rejected: $out"; fi
printf '#include "runtime/cntr/cntr.h"\n' >>"$dir/runtime/cq/cq.h"
out=$("$check" "$dir"); rc=$?
if [ "$rc" -ne 1 ]; then
  fail "cycle: exit $rc (want 1): $out"
elif ! grep -q 'include cycle runtime/cntr <-> runtime/cq (runtime/cntr/cntr.h and runtime/cq/cq.h' <<<"$out"; then
  fail "cycle: not named: $out"
else
  passes=$((passes + 1))
fi

# A transports/ header the layers above include must not reach UCX through another header:
# runtime/ compiles without UCX's include paths. A header free of them passes; one whose own
# include reaches <ucs/...> is reported once, at the runtime file, with the path.
dir="$tmp/reach"
good_tree "$dir"
printf '#pragma once\n#include "transports/ucx_fwd.h"\n' >"$dir/transports/status.h"
printf '#pragma once\nstruct uct_ep;\n' >"$dir/transports/ucx_fwd.h"
if out=$("$check" "$dir"); then passes=$((passes + 1)); else fail "reach: a UCX-free header was rejected: $out"; fi
printf '#include "transports/memory/inner.h"\n' >>"$dir/transports/status.h"
printf '#pragma once\n#include <ucs/type/status.h>\n' >"$dir/transports/memory/inner.h"
out=$("$check" "$dir"); rc=$?
if [ "$rc" -ne 1 ]; then
  fail "reach: exit $rc (want 1): $out"
elif ! grep -q 'layer violation: runtime/mr/mr.h includes "transports/status.h", which reaches transports/memory/inner.h -> <ucs/type/status.h>' <<<"$out"; then
  fail "reach: not named: $out"
elif [ "$(grep -c '^layer violation' <<<"$out")" -ne 1 ]; then
  fail "reach: other lines reported: $out"
else
  passes=$((passes + 1))
fi

# The repository itself keeps the rules.
if out=$("$check"); then passes=$((passes + 1)); else fail "the repository: $out"; fi

echo "$passes passed, $failures failed"
[ "$failures" -eq 0 ]
