#!/usr/bin/env bash
# Enforces the layer rules of DESIGN.md on every quoted #include (dependencies point down):
#   tools/      -> tools/ only (plus the public <rdma/...> and <ufi/...> headers)
#   api/        -> api/, runtime/
#   runtime/    -> runtime/, transports/           (never api/ or tools/)
#   transports/ -> transports/, runtime/config/, runtime/log/
#   runtime/config/, runtime/log/ (the service layer) -> each other only
# Exit 1 and one line per violation.
set -uo pipefail
cd "${1:-$(dirname "$0")/..}"

allowed() {  # allowed <file> <included path>
  local file=$1 inc=$2
  case "$file" in
    runtime/config/*|runtime/log/*) [[ $inc == runtime/config/* || $inc == runtime/log/* ]] ;;
    transports/*) [[ $inc == transports/* || $inc == runtime/config/* || $inc == runtime/log/* ]] ;;
    runtime/*) [[ $inc == runtime/* || $inc == transports/* ]] ;;
    api/*) [[ $inc == api/* || $inc == runtime/* ]] ;;
    tools/*) [[ $inc == tools/* ]] ;;
    *) return 0 ;;
  esac
}

violations=0
while IFS= read -r file; do
  while IFS= read -r inc; do
    # Only project paths (they contain a '/'); same-folder includes are not used.
    [[ $inc == */* ]] || continue
    if ! allowed "$file" "$inc"; then
      echo "layer violation: $file includes \"$inc\""
      violations=$((violations + 1))
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
done < <(git ls-files 'api/*.cpp' 'api/*.h' 'runtime/*' 'transports/*' 'tools/*' 2>/dev/null | grep -E '\.(c|cc|cpp|h|hpp)$' || find api runtime transports tools -name '*.[ch]*')

if [ "$violations" -ne 0 ]; then
  echo "$violations layer violation(s); see DESIGN.md (Layers)"
  exit 1
fi
echo "layer rules hold"
