#!/usr/bin/env bash
# Open MPI with one rank per host of the multi-host test bed (testbed.sh): mpirun runs on
# host 1 and starts host 2's daemon through its rsh launcher pointed at the test bed
# (plm_rsh_agent: a script that enters host N's namespaces for "mhN"). The ranks run the MPI
# test programs (tests/mpi) through the OFI MTL on ufi's compat libfabric.so.1, with ufi's
# default transport selection, which must choose tcp between the two hosts. A program named
# ufi_perf (not MPI) runs its group through mpirun's PMIx server instead (-n 300).
# Usage: mpi_multihost.sh <compat dir> <program>...   (77 = skipped)
set -uo pipefail
compat_dir=$1
shift
. "$(dirname "$0")/testbed.sh"
command -v mpirun >/dev/null || mh_skip "mpirun not installed (openmpi-bin)"
mh_up 2

fail() { echo "FAIL: $*"; exit 1; }

cat >"$mh_dir/agent" <<AGENT
#!/usr/bin/env bash
# plm_rsh_agent for the test bed: "agent mhN command..." runs the command on host N.
host=\$1
shift
exec nsenter -t "\$(cat $mh_dir/holder\${host#mh})" -m -u -i -n sh -c "cd /tmp && \$*"
AGENT
chmod +x "$mh_dir/agent"
printf 'mh1 slots=1\nmh2 slots=1\n' >"$mh_dir/hostfile"
mpirun_args=(--allow-run-as-root --hostfile "$mh_dir/hostfile" --mca plm_rsh_agent "$mh_dir/agent"
             --mca pml cm --mca mtl ofi -np 2)

# Where the ranks run: one on each host.
hosts=$(mh_on 1 timeout -k 5 60 mpirun "${mpirun_args[@]}" hostname 2>&1 | sort | tr '\n' ' ')
[ "$hosts" = "mh1 mh2 " ] || fail "the ranks ran on '$hosts', not on mh1 and mh2"
for program in "$@"; do
  log="$mh_dir/$(basename "$program").log"
  extra=()
  # One-sided through ufi as well: osc rdma over the OFI BTL (as tests/mpi runs it).
  [ "$(basename "$program")" = mpi_one_sided ] && extra=(--mca osc rdma --mca btl ofi,self)
  args=()
  [ "$(basename "$program")" = ufi_perf ] && args=(-n 300)
  mh_on 1 timeout -k 5 240 mpirun "${mpirun_args[@]}" "${extra[@]}" -x LD_LIBRARY_PATH="$compat_dir" \
    -x FI_LOG_LEVEL=warn -x UFI_LOG_LEVEL=info -x UFI_PROTO_INFO=y "$program" "${args[@]}" >"$log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || { grep -v '<debug>' "$log" | tail -50; fail "$(basename "$program") across two hosts: exit $rc"; }
  lanes=$(grep -o 'active messages over [a-z]*/[A-Za-z0-9]*' "$log" | sort -u | tr '\n' ';')
  # Each rank reaches the other over its host's link (a rank that also talks to itself, as
  # the OFI BTL does, uses self): never shared memory between the hosts.
  case "$lanes" in
    *"over tcp/v1;"*"over tcp/v2;"*) ;;
    *) fail "$(basename "$program"): the ranks chose '$lanes', not tcp over each host's link" ;;
  esac
  case "$lanes" in
    *posix* | *sysv* | *cma*) fail "$(basename "$program"): shared memory between hosts ('$lanes')" ;;
  esac
  if [ "$(basename "$program")" = ufi_perf ]; then
    grep -q "2 processes (started by a PMIx launcher" "$log" || { tail -20 "$log"; fail "ufi_perf printed no group report"; }
  fi
  echo "ok: $(basename "$program") on mh1 and mh2 over ${lanes}"
  grep -v 'libfabric:' "$log" | tail -3
done
echo "PASS"
