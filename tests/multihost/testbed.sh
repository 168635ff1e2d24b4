# A multi-host test bed on one machine (sourced by the multihost tests): "hosts" that look
# like separate machines to ufi and UCX, joined by a switch.
#
# Each host is a network namespace (its own interfaces: lo and vN, address 10.213.0.N/24),
# plus a mount namespace with its own /dev/shm, a UTS namespace with its own hostname and an
# IPC namespace (System V shared memory), held open by a sleeping process; every command run
# on a host enters all four (nsenter), so processes of one host share memory as on a real
# one and processes of different hosts cannot: ufi's default selection then picks shared
# memory within a host and tcp between hosts by itself. The switch is a bridge in a namespace
# of its own. Nothing is added to the machine's own network namespace, and traffic never
# leaves the namespaces.
#
#   mh_up N        creates N hosts (exit 77, skipped, where the machine does not allow it)
#   mh_on I CMD..  runs CMD on host I (absolute paths: the working directory is /)
#   mh_addr I      host I's address
# Everything is removed at exit (trap). Names carry the shell's pid, so runs never collide.
set -uo pipefail

mh_prefix="ufimh$$"
mh_hosts=0
mh_dir=$(mktemp -d)

mh_skip() { echo "SKIP: $*"; exit 77; }

mh_down() {
  local i pid
  for ((i = 1; i <= mh_hosts; i++)); do
    pid=$(cat "$mh_dir/holder$i" 2>/dev/null) && kill "$pid" 2>/dev/null
  done
  for ((i = 1; i <= mh_hosts; i++)); do ip netns del "$mh_prefix-h$i" 2>/dev/null; done
  ip netns del "$mh_prefix-sw" 2>/dev/null
  rm -rf "$mh_dir"
}
trap mh_down EXIT
trap "exit 143" TERM INT  # (so that a killed test still removes its hosts)

mh_addr() { echo "10.213.0.$1"; }

mh_up() {
  local n=$1 i h deadline
  [ "$(id -u)" -eq 0 ] || mh_skip "the multi-host test bed needs root (network, mount, UTS and IPC namespaces)"
  for tool in ip unshare nsenter setsid; do
    command -v "$tool" >/dev/null || mh_skip "$tool is not installed"
  done
  ip netns add "$mh_prefix-sw" 2>/dev/null || mh_skip "ip netns add failed (no CAP_SYS_ADMIN in this container?)"
  ip -n "$mh_prefix-sw" link add br0 type bridge 2>/dev/null || mh_skip "no bridge support in this kernel"
  ip -n "$mh_prefix-sw" link set br0 up
  for ((i = 1; i <= n; i++)); do
    h="$mh_prefix-h$i"
    ip netns add "$h" || { echo "FAIL: ip netns add $h"; exit 1; }
    mh_hosts=$i
    ip link add "v$i" netns "$h" type veth peer name "p$i" netns "$mh_prefix-sw" ||
      mh_skip "no veth support in this kernel"
    ip -n "$mh_prefix-sw" link set "p$i" master br0 up
    ip -n "$h" addr add "$(mh_addr "$i")/24" dev "v$i"
    ip -n "$h" link set "v$i" up
    ip -n "$h" link set lo up
    # The holder: the host's mount (own /dev/shm), UTS (hostname) and IPC namespaces.
    setsid ip netns exec "$h" unshare --mount --uts --ipc --propagation private --fork \
      sh -c "mount -t tmpfs -o size=2g tmpfs /dev/shm && hostname mh$i && echo \$\$ > $mh_dir/holder$i.tmp && mv $mh_dir/holder$i.tmp $mh_dir/holder$i && exec sleep 3600" \
      >"$mh_dir/holder$i.log" 2>&1 </dev/null &
  done
  deadline=$((SECONDS + 10))
  for ((i = 1; i <= n; i++)); do
    until [ -s "$mh_dir/holder$i" ]; do
      [ "$SECONDS" -lt "$deadline" ] || { cat "$mh_dir/holder$i.log"; mh_skip "host $i's namespaces could not be made (unshare)"; }
      sleep 0.05
    done
  done
  # The link is up when each host sees the others' addresses (bounded).
  deadline=$((SECONDS + 10))
  until mh_on 1 ip neigh show >/dev/null && [ "$(ip -n "$mh_prefix-sw" -br link show master br0 | grep -c UP)" -eq "$n" ]; do
    [ "$SECONDS" -lt "$deadline" ] || { echo "FAIL: the switch's ports did not come up"; exit 1; }
    sleep 0.05
  done
}

mh_on() {
  local i=$1; shift
  nsenter -t "$(cat "$mh_dir/holder$i")" -m -u -i -n "$@"
}

# A TCP port free on host $1 (for the programs' own address exchange).
mh_port() {
  mh_on "$1" python3 -c 'import socket; s = socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])'
}
