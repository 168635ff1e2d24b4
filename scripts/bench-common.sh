# Helpers the benchmark scripts share (sourced; they set $perf, and $port to a free range).
# ucx ENV ARGS...: ucx_perftest server and client on 127.0.0.1; prints the client's Final row.
# ufi ENV ARGS...: ufi_perf server and client on 127.0.0.1; prints the client's CSV row.
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
