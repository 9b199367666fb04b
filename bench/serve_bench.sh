#!/usr/bin/env bash
# /metrics under load: sparkops serve vs prometheus-node-exporter (meminfo, hwmon, pressure and
# thermal_zone collectors only), same machine, same wrk run shape, loopback only, at 8 and at 64
# connections (CONNECTIONS="8 64" by default).
#   bench/serve_bench.sh [BUILD_DIR] [DURATION_S]
# Needs: wrk, prometheus-node-exporter (Debian). sparkops reads the live machine; when the build has
# the fake NVML library it is loaded too, so the GPU series are exported as on a GB10.
# PIN=1 (needs 2 cores and taskset): both exporters run on CPU 0 and wrk on CPU 1, the same for
# sparkops and node_exporter, so the load generator cannot queue the server on its core. Off by
# default: on the shared 2-core VM with builds running, pinning made sparkops' p99 at 8
# connections 15.7 ms against 6.6 ms unpinned (2 s runs, one after the other, 2026-12-02): a
# server held to one core that a compiler also wants waits longer than one the scheduler moves.
set -euo pipefail
build=${1:-build/release}
duration=${2:-10}
bin=$build/src/cli/sparkops
[[ -x $bin ]] || { echo "no $bin: build first" >&2; exit 2; }
command -v wrk >/dev/null || { echo "apt-get install wrk" >&2; exit 2; }
ne=/usr/bin/prometheus-node-exporter
[[ -x $ne ]] || { echo "apt-get install prometheus-node-exporter" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

pin_server=()
pin_wrk=()
if [[ ${PIN:-0} == 1 ]]; then
  pin_server=(taskset -c 0)
  pin_wrk=(taskset -c 1)
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

sp_port=$(free_port)
# The fake libnvidia-ml: BUILD_DIR's, else build/bench's or build/dev's (FAKE_NVML=path overrides).
fake=${FAKE_NVML:-}
for d in "$build" "$repo/build/bench" "$repo/build/dev"; do
  [[ -z $fake && -f $d/tests/gpu/libfake_nvml.so ]] && fake=$d/tests/gpu/libfake_nvml.so
done
gpu_env=()
gpu_flag=(--gpu none)
if [[ -n $fake ]]; then
  gpu_env=(SPARKOPS_NVML_LIB="$fake" FAKE_NVML_SCENARIO="$repo/tests/fixtures/nvml/gb10")
  gpu_flag=(--gpu nvml)
fi
env "${gpu_env[@]}" "${pin_server[@]}" "$bin" serve --listen "127.0.0.1:$sp_port" --interval 5s "${gpu_flag[@]}" >"$work/sparkops.log" 2>&1 &
pids+=($!); sp_pid=$!
ne_port=$(free_port)
"${pin_server[@]}" "$ne" --web.listen-address="127.0.0.1:$ne_port" --collector.disable-defaults --collector.meminfo \
  --collector.hwmon --collector.pressure --collector.thermal_zone >"$work/ne.log" 2>&1 &
pids+=($!); ne_pid=$!
for i in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$sp_port/metrics" >/dev/null && curl -sf "http://127.0.0.1:$ne_port/metrics" >/dev/null && break
  sleep 0.1
done

run() {  # name pid url connections
  local name=$1 pid=$2 url=$3 c=$4
  local size series
  size=$(curl -s "$url" | wc -c)
  series=$(curl -s "$url" | grep -vc '^#')
  "${pin_wrk[@]}" wrk -t2 -c"$c" -d"${duration}s" --latency "$url" >"$work/$name.wrk"
  local p50 p99 rps rss hwm
  p50=$(awk '$1=="50%"{print $2}' "$work/$name.wrk")
  p99=$(awk '$1=="99%"{print $2}' "$work/$name.wrk")
  rps=$(awk '/^Requests\/sec/{print $2}' "$work/$name.wrk")
  rss=$(awk '/^VmRSS/{print $2" "$3}' "/proc/$pid/status")
  hwm=$(awk '/^VmHWM/{print $2" "$3}' "/proc/$pid/status")
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$c" "$series" "$size" "$p50" "$p99" "$rps" "$rss" "$hwm"
}

echo "wrk -t2 -d${duration}s --latency, loopback, $(nproc) cores, $(uname -m)${pin_wrk:+, exporters pinned to CPU 0 and wrk to CPU 1}"
echo "| exporter | connections | series | bytes | p50 | p99 | req/s | RSS after | peak RSS |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for c in ${CONNECTIONS:-8 64}; do
  run "sparkops serve" "$sp_pid" "http://127.0.0.1:$sp_port/metrics" "$c"
  run "node_exporter $("$ne" --version 2>&1 | awk 'NR==1{print $3}')" "$ne_pid" "http://127.0.0.1:$ne_port/metrics" "$c"
done
