# What the benchmark scripts share (sourced from the repository root): the tools they need, the
# build they measure ($perf, $compat), traffic on loopback only, a port range ($port), and:
# ucx ENV ARGS...: ucx_perftest server and client on 127.0.0.1; prints the client's Final row.
# ufi ENV ARGS...: ufi_perf server and client on 127.0.0.1; prints the client's CSV row.
for tool in ucx_perftest fi_pingpong; do
  command -v $tool >/dev/null || { echo "missing $tool: scripts/install-deps.sh installs it" >&2; exit 2; }
done
perf=build/tools/ufi_perf
compat=build/api/compat
[ -x $perf ] && [ -e $compat/libfabric.so.1 ] || { echo "build first (scripts/build.sh)" >&2; exit 2; }
export UCX_NET_DEVICES=lo FI_TCP_IFACE=lo UFI_NET_DEVICES=lo
port=$((20000 + RANDOM % 20000))
ucx() {
  local env="$1"; shift
  env $env ucx_perftest -p $port >/dev/null 2>&1 &
  local srv=$!; sleep 0.5
  env $env timeout 120 ucx_perftest 127.0.0.1 -p $port "$@" 2>&1 | awk '/Final:/ {print}'
  wait $srv 2>/dev/null; port=$((port + 1))
}
ufi() {
  local env="$1"; shift
  env $env $perf -p $port "$@" >/dev/null 2>&1 &
  local srv=$!; sleep 0.5
  env $env timeout 120 $perf -p $port --csv "$@" 127.0.0.1 2>&1 | tail -1
  wait $srv 2>/dev/null; port=$((port + 1))
}
