#!/usr/bin/env bash
# Installs the Debian 12 packages ufi needs to build, test and benchmark, if any are missing.
# Safe to run repeatedly; runs apt-get only when something is missing. Works as root (CI)
# or through sudo. Nothing is downloaded at build time: meson runs with --wrap-mode=nodownload.
set -euo pipefail

packages=(
  g++ gcc pkg-config meson ninja-build python3
  libucx-dev ucx-utils          # UCT/UCS/UCM headers and ucx_info/ucx_perftest (benchmarks)
  libhwloc-dev                  # topology
  libspdlog-dev libfmt-dev      # logging
  nlohmann-json3-dev            # ufi_info --json (header-only)
  libgtest-dev libgmock-dev libbenchmark-dev  # tests and benchmark programs
  libfabric-bin                 # compat tests: Debian's fi_info / fi_pingpong against our libfabric.so.1
  iproute2                      # network-namespace tests
  openmpi-bin libopenmpi-dev    # MPI tests: Open MPI's OFI MTL and BTL over our libfabric.so.1
  libpmix-dev                   # ufi_perf as a group under mpirun (names through PMIx)
  groff-base man-db bsdextrautils  # man pages: rendered and checked for warnings (groff, man -l, col)
  clang libclang-rt-14-dev      # libFuzzer harnesses (scripts/fuzz.sh)
)

missing=()
for p in "${packages[@]}"; do
  [[ "$p" == \#* ]] && continue
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "ufi: installing missing packages: ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "ufi: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
