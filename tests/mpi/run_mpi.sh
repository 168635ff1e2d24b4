#!/usr/bin/env bash
# Runs an MPI test program under Open MPI's mpirun with the OFI MTL on ufi's compat
# libfabric.so.1, as a user would: LD_LIBRARY_PATH at the compat directory, the default
# provider exclude list, network transports pinned to loopback.
#
#   run_mpi.sh COMPAT_DIR NP SETTING PROGRAM [ARGS...]
#
# SETTING: shm (ufi's default transports: shared memory between the ranks) or tcp (UFI_TLS=tcp,self:
# tcp over lo), optionally followed by comma-separated extras:
#   tag_1, tag_2, tag_full   mtl_ofi_tag_mode
#   osc_rdma                 one-sided through the OFI BTL on ufi and osc rdma
#   osc_pt2pt                one-sided through osc pt2pt over the MTL
#   selection                also check that Open MPI's MTL picked provider ufi on domain lo
#   mixed                    the last rank alone on UFI_TLS=tcp,self (the others as SETTING
#                            says): ranks that chose different transports still meet
# Bounded by MPI_TEST_TIMEOUT seconds (default 240). On failure the whole output is printed:
# the failing MPI call (tests/mpi/mpi_check.h) and ufi's warnings (FI_LOG_LEVEL=warn) for it.
set -u
compat=$1 np=$2 setting=$3
shift 3
limit=${MPI_TEST_TIMEOUT:-240}

if ! command -v mpirun >/dev/null; then
  echo "mpirun not found (scripts/install-deps.sh installs openmpi-bin)" >&2
  exit 1
fi

# Environment for every rank (repeated per app context where the ranks differ: mixed).
envs=(-x LD_LIBRARY_PATH="$compat${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      -x UFI_NET_DEVICES=lo -x FI_LOG_LEVEL=warn)
args=(--allow-run-as-root --oversubscribe --bind-to none
      --mca pml cm --mca mtl ofi
      # Open MPI's own out-of-band traffic stays on loopback too.
      --mca oob_tcp_if_include lo --mca btl_tcp_if_include lo)
check_selection=0
mixed=0
IFS=, read -r -a parts <<<"$setting"
for p in "${parts[@]}"; do
  case "$p" in
    shm) ;;
    tcp) envs+=(-x UFI_TLS=tcp,self) ;;
    mixed) mixed=1 ;;
    tag_1) args+=(--mca mtl_ofi_tag_mode ofi_tag_1) ;;
    tag_2) args+=(--mca mtl_ofi_tag_mode ofi_tag_2) ;;
    tag_full) args+=(--mca mtl_ofi_tag_mode ofi_tag_full) ;;
    osc_rdma) args+=(--mca osc rdma --mca btl ofi,self) ;;
    osc_pt2pt) args+=(--mca osc pt2pt) ;;
    selection) check_selection=1; args+=(--mca mtl_base_verbose 100 --mca mtl_ofi_verbose 100) ;;
    *) echo "unknown setting $p" >&2; exit 2 ;;
  esac
done

out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ $mixed -eq 1 ]; then
  [ "$np" -ge 2 ] || { echo "mixed needs 2 ranks or more" >&2; exit 2; }
  cmd=("${args[@]}" -np $((np - 1)) "${envs[@]}" "$@" : -np 1 "${envs[@]}" -x UFI_TLS=tcp,self "$@")
else
  cmd=("${args[@]}" -np "$np" "${envs[@]}" "$@")
fi
echo "+ mpirun ${cmd[*]}"
timeout -k 10 "$limit" mpirun "${cmd[@]}" >"$out" 2>&1
rc=$?
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  echo "TIMEOUT after ${limit}s"
fi
if [ $rc -ne 0 ]; then
  cat "$out"
  echo "FAILED (exit $rc)"
  exit 1
fi
grep -v "mca: base:\|mca:base:select\|select: init" "$out" | tail -20
if [ $check_selection -eq 1 ]; then
  # mtl_ofi_component.c prints the provider and domain it chose at this verbosity.
  if ! grep -q "mtl:ofi:prov: ufi" "$out" || ! grep -q "mtl:ofi:provider: lo" "$out"; then
    cat "$out"
    echo "FAILED: Open MPI's OFI MTL did not report provider ufi on domain lo"
    exit 1
  fi
  # ... with no include list and its default exclude list (shm, tcp and others left out).
  if ! grep -q 'provider_include = "(null)"' "$out" ||
     ! grep -q 'provider_exclude = "shm,sockets,tcp,udp,rstream,usnic"' "$out"; then
    cat "$out"
    echo "FAILED: Open MPI did not run with its default provider lists"
    exit 1
  fi
  echo "selection: Open MPI's OFI MTL chose ufi (domain lo) with its default provider lists"
fi
exit 0
