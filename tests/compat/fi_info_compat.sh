#!/usr/bin/env bash
# Debian's fi_info (built against libfabric 1.17) run against ufi's compat libfabric.so.1:
# it must load ufi, list provider ufi, print its entries and their attributes, and the
# library must export the symbol versions of shared/abi-notes.md.
# Usage: fi_info_compat.sh <compat dir>     (exit 77 = skipped: fi_info is not installed)
set -uo pipefail
# Note: never pipe into grep -q under pipefail (the writer may die of SIGPIPE); use <<<.
compat_dir=$1
fail() { echo "FAIL: $*"; exit 1; }

command -v fi_info >/dev/null || { echo "SKIP: fi_info not installed (apt-get install libfabric-bin)"; exit 77; }
lib="$compat_dir/libfabric.so.1"
[ -e "$lib" ] || fail "$lib does not exist"

export LD_LIBRARY_PATH="$compat_dir"
export FI_LOG_LEVEL=warn

# The binary really resolves libfabric.so.1 to ours.
grep -q "$compat_dir/libfabric.so.1" <<<"$(ldd "$(command -v fi_info)")" || fail "fi_info does not load $lib: $(ldd "$(command -v fi_info)" | grep fabric)"

out=$(fi_info -l 2>&1) || fail "fi_info -l failed: $out"
grep -qx "ufi:" <<<"$out" || fail "fi_info -l does not list ufi: $out"
grep -q "version: 0.1" <<<"$out" || fail "fi_info -l shows no ufi version: $out"

out=$(fi_info -p ufi 2>&1) || fail "fi_info -p ufi failed: $out"
grep -q "provider: ufi" <<<"$out" || fail "no ufi entry: $out"
grep -q "type: FI_EP_RDM" <<<"$out" || fail "no FI_EP_RDM entry: $out"
grep -q "protocol: FI_PROTO_UCX" <<<"$out" || fail "protocol not printed: $out"
# The first entry is the domain that reaches same-host and remote peers (a real NIC when
# one exists; lo or shm otherwise).
first_domain=$(echo "$out" | awk '/domain:/ {print $2; exit}')
[ -n "$first_domain" ] || fail "no domain printed: $out"

out=$(fi_info -p ufi -v 2>&1) || fail "fi_info -p ufi -v failed: $out"
for field in "fi_info:" "fi_tx_attr:" "inject_size:" "fi_rx_attr:" "fi_ep_attr:" "max_msg_size:" \
             "fi_domain_attr:" "mr_key_size: 8" "cq_data_size: 8" "fi_fabric_attr:" "prov_name: ufi"; do
  grep -q "$field" <<<"$out" || fail "fi_info -v lacks '$field'"
done
# inject_size is derived from am_short: never zero on a machine with shared memory or tcp.
inject=$(echo "$out" | awk '/inject_size:/ {print $2; exit}')
[ "${inject:-0}" -gt 0 ] || fail "inject_size is $inject"

# Hints that ufi cannot meet give -FI_ENODATA (61), like any provider.
fi_info -p ufi -c FI_COLLECTIVE >/dev/null 2>&1 && fail "FI_COLLECTIVE should not match"
# Each endpoint type: RDM, DGRAM, and MSG (where tcp is: connected endpoints are made over it).
for t in FI_EP_RDM FI_EP_DGRAM FI_EP_MSG; do
  fi_info -p ufi -t "$t" | grep -q "type: $t" || fail "no $t entry"
done
UFI_TLS=shm fi_info -p ufi -t FI_EP_MSG >/dev/null 2>&1 && fail "FI_EP_MSG without tcp"
# Other providers are not ufi.
fi_info -p tcp >/dev/null 2>&1 && fail "-p tcp matched ufi's library"

# Symbol versions (shared/abi-notes.md).
if command -v objdump >/dev/null; then
  syms=$(objdump -T "$lib")
  # objdump prints hidden (non-default) versions in parentheses: "(FABRIC_1.3) fi_getinfo".
  for want in "FABRIC_1.0 fi_strerror" "FABRIC_1.0 fi_tostr" "FABRIC_1.1 fi_fabric" \
              "FABRIC_1.3 fi_getinfo" "FABRIC_1.3 fi_dupinfo" "FABRIC_1.3 fi_freeinfo" \
              "FABRIC_1.4 fi_tostr_r" "FABRIC_1.5 fi_open" "FABRIC_1.6 fi_log_ready" \
              "FABRIC_1.7 fi_getinfo" "FABRIC_1.8 fi_getinfo" "FABRIC_1.8 fi_fabric2" \
              "FABRIC_1.9 fi_getinfo" "FABRIC_1.10 fi_getinfo" "FABRIC_1.10 fi_dupinfo" \
              "FABRIC_1.0 fi_param_get" "FABRIC_1.0 fi_getparams" "FABRIC_1.0 fi_log" \
              "FABRIC_1.0 fi_version" "FABRIC_1.0 fi_param_define" "FABRIC_1.0 fi_freeparams" \
              "FABRIC_1.0 fi_log_enabled"; do
    ver=${want% *}; sym=${want#* }
    grep -Eq "[( ]${ver//./\\.}\)? +${sym}\$" <<<"$syms" || fail "objdump -T lacks ${sym}@${ver}"
  done
  # fi_getinfo@@FABRIC_1.10 is the default version (what new programs link against).
  grep -E " FABRIC_1\.10 +fi_getinfo$" <<<"$syms" >/dev/null || fail "fi_getinfo@@FABRIC_1.10 is not the default version"
fi
echo "PASS: Debian's fi_info loads ufi's libfabric.so.1 and lists provider ufi"
