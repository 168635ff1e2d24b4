#!/usr/bin/env bash
# Draws scripts/bench-sizes.sh's CSV with gnuplot (Debian's gnuplot-nox, installed here when
# missing): one-way latency and bandwidth against message size, ufi beside UCP and
# libfabric's providers, over shared memory and over tcp. Writes four PNG files.
# Usage: scripts/plot-perf.sh perf.csv [output dir, default docs/perf]
set -euo pipefail
csv=$1
out=${2:-docs/perf}
if ! command -v gnuplot >/dev/null; then
  sudo_cmd=(); [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends gnuplot-nox </dev/null
fi
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One data file per (series, transport, kind): "size value" lines.
tail -n +2 "$csv" | while IFS=, read -r series transport kind size value; do
  [ -n "$value" ] || continue
  f="$tmp/$(tr ' ()/' '____' <<<"$series")__${transport}__$kind.dat"
  echo "$size $value" >>"$f"
  echo "$series" >"$f.name"
done
plot() {  # transport kind title ylabel file
  local transport=$1 kind=$2 title=$3 ylabel=$4 png=$5 cmds=""
  for f in "$tmp"/*__"${transport}"__"${kind}".dat; do
    [ -e "$f" ] || continue
    sort -n "$f" -o "$f"
    cmds+="${cmds:+, }'$f' using 1:2 with linespoints title '$(cat "$f.name")'"
  done
  [ -n "$cmds" ] || return 0
  gnuplot <<GP
set terminal pngcairo size 900,560 noenhanced font ",11"
set output '$out/$png'
set title '$title'
set logscale x 2
set logscale y
set xtics ("1" 1, "8" 8, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "1M" 1048576, "4M" 4194304)
set xlabel 'message size (bytes)'
set ylabel '$ylabel'
set grid
set key top left
plot $cmds
GP
  echo "wrote $out/$png"
}
plot shm lat "one-way latency, shared memory" "microseconds (lower is better)" latency_shm.png
plot tcp lat "one-way latency, tcp on loopback" "microseconds (lower is better)" latency_tcp.png
plot shm bw "bandwidth, shared memory (tag_bw, streaming)" "MB/s (higher is better)" bandwidth_shm.png
plot tcp bw "bandwidth, tcp on loopback (tag_bw, streaming)" "MB/s (higher is better)" bandwidth_tcp.png
