#!/usr/bin/env bash
# Enforces the layer rules of DESIGN.md on every #include (dependencies point down):
#   tools/      -> tools/ only (plus the public headers of include/)
#   api/        -> api/, runtime/, base/        (the C face)
#   runtime/    -> runtime/, transports/, base/ (never api/ or tools/)
#   transports/ -> transports/, base/
#   base/       -> base/ only; inside it, base/config/ never includes base/log/ (the log
#                  reads its settings from the config registry, not the other way round)
#   include/    -> include/ only (the public headers: <rdma/...>, <ufi/...>)
# no two folders include each other, and only transports/
# includes UCX and hwloc headers (<uct/...>, <ucs/...>, <ucm/...>,
# <hwloc...>): every other layer reaches them through a transports/ function. UCP (<ucp/...>)
# appears only in the UCP anchors (tools/ufi_perf/group_ucp.cpp, tools/bench/many_peers_ucp.c). Nor does any
# header the other layers include, directly or through other headers: runtime/, api/ and
# tools/ compile without UCX's and hwloc's include paths (the transports/ headers they see
# name UCX's handles through transports/ucx_fwd.h, declarations only).
# Quoted includes are project paths; angle-bracket ones are checked for UCX and hwloc only.
# Usage: check-layers.sh [ROOT] (default: this repository). Exit 1 and one line per violation.
set -uo pipefail
cd "${1:-$(dirname "$0")/..}" || exit 2

allowed() {  # allowed <file> <included path>
  local file=$1 inc=$2
  case "$file" in
    base/config/*) [[ $inc == base/* && $inc != base/log/* ]] ;;
    base/*) [[ $inc == base/* ]] ;;
    transports/*) [[ $inc == transports/* || $inc == base/* ]] ;;
    runtime/*) [[ $inc == runtime/* || $inc == transports/* || $inc == base/* ]] ;;
    api/*) [[ $inc == api/* || $inc == runtime/* || $inc == base/* ]] ;;
    tools/*) [[ $inc == tools/* ]] ;;
    include/*) [[ $inc == rdma/* || $inc == ufi/* ]] ;;
    *) return 0 ;;
  esac
}

# UCX (uct, ucs, ucm) and hwloc headers: transports/ only. UCP (ucp): nowhere in ufi; only
# the anchor measurements (ufi_perf --ucp: tools/ufi_perf/group_ucp.cpp; tools/bench/many_peers_ucp.c) drive it, beside ufi.
system_allowed() {  # system_allowed <file> <included path>
  local file=$1 inc=$2
  case "$inc" in
    uct/*|ucs/*|ucm/*|hwloc*) [[ $file == transports/* ]] ;;
    ucp/*) [[ $file == tools/ufi_perf/group_ucp.cpp || $file == tools/bench/many_peers_ucp.c ]] ;;
    *) return 0 ;;
  esac
}

# The files to check: tracked ones in a git checkout, else every source file (a copy, or the
# self-test's fixture trees).
list_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
     [ "$(git rev-parse --show-prefix 2>/dev/null)" = "" ]; then
    git ls-files 'api/*' 'base/*' 'include/*' 'runtime/*' 'transports/*' 'tools/*' |
      grep -E '\.(c|cc|cpp|h|hpp)$'
  else
    find api base include runtime transports tools -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' \
      -o -name '*.h' -o -name '*.hpp' \) 2>/dev/null | sort
  fi
}

# Folders that include each other (A's files include B's and B's include A's) are one module
# in two places: a violation, with no exceptions.
violations=0
declare -A edge  # "folderA folderB" -> the first file of A seen including one of B
while IFS= read -r file; do
  while IFS= read -r inc; do
    # Only project paths (they contain a '/'); same-folder includes are not used.
    [[ $inc == */* ]] || continue
    if ! allowed "$file" "$inc"; then
      echo "layer violation: $file includes \"$inc\""
      violations=$((violations + 1))
      continue  # (an include against the layers is reported once, not again as a cycle)
    fi
    from=$(dirname "$file") to=$(dirname "$inc")
    [ "$from" != "$to" ] && [ -z "${edge["$from $to"]:-}" ] && edge["$from $to"]=$file
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
  while IFS= read -r inc; do
    if ! system_allowed "$file" "$inc"; then
      echo "layer violation: $file includes <$inc> (only transports/ may use UCX and hwloc)"
      violations=$((violations + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<[[:space:]]*\([^>[:space:]]*\)[[:space:]]*>.*/\1/p' "$file")
done < <(list_files)

# Whether a project header reaches a UCX or hwloc header through its quoted includes.
declare -A reaches_ucx  # header -> "" (no) or the system header it reaches
declare -A visiting
reaches_system() {  # reaches_system <header>; sets REPLY
  local h=$1 inc sys
  if [ -n "${reaches_ucx[$h]+set}" ]; then REPLY=${reaches_ucx[$h]}; return; fi
  REPLY=""
  [ -f "$h" ] || { reaches_ucx[$h]=""; return; }
  [ -n "${visiting[$h]:-}" ] && return  # (a cycle: decided where it started)
  visiting[$h]=1
  sys=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<[[:space:]]*\(\(uct\|ucs\|ucm\|ucp\)\/[^>[:space:]]*\|hwloc[^>[:space:]]*\)[[:space:]]*>.*/\1/p' "$h" | head -1)
  if [ -n "$sys" ]; then
    reaches_ucx[$h]="<$sys>"; REPLY="<$sys>"; return
  fi
  while IFS= read -r inc; do
    [[ $inc == */* ]] || continue
    reaches_system "$inc"
    if [ -n "$REPLY" ]; then
      reaches_ucx[$h]="$inc -> $REPLY"; REPLY="$inc -> $REPLY"; return
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$h")
  reaches_ucx[$h]=""
  REPLY=""
}
while IFS= read -r file; do
  case "$file" in runtime/*|api/*|tools/*) ;; *) continue ;; esac
  while IFS= read -r inc; do
    [[ $inc == transports/* ]] || continue
    reaches_system "$inc"
    if [ -n "$REPLY" ]; then
      echo "layer violation: $file includes \"$inc\", which reaches $REPLY (the layers above transports/ compile without UCX and hwloc)"
      violations=$((violations + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(list_files)

for key in "${!edge[@]}"; do
  read -r a b <<<"$key"
  [[ "$a" < "$b" ]] || continue
  [ -n "${edge["$b $a"]:-}" ] || continue
  echo "layer violation: include cycle $a <-> $b (${edge["$a $b"]} and ${edge["$b $a"]} include each other's folders)"
  violations=$((violations + 1))
done

if [ "$violations" -ne 0 ]; then
  echo "$violations layer violation(s); see DESIGN.md (Layers)"
  exit 1
fi
echo "layer rules hold"
