#!/usr/bin/env bash
# Every row of docs/benchmarks.md "Release rows" in one run, each with the baseline its script
# measures in the same run. Builds what is missing: the release preset's sparkops (and its HTTP
# module) and the bench preset's sample_bench and fake libnvidia-ml (the sample tick rows and the
# fake-GPU rows of top, serve and sample need it). Each script's output goes to OUT_DIR/NAME.txt.
#   bench/release_rows.sh [OUT_DIR] [BASE_SPARKOPS]
# BASE_SPARKOPS: an older sparkops binary timed beside the release one by the scripts that take one
# (status, analyze); when it lies in a build folder (BUILD/src/cli/sparkops), that build is also
# measured by the memory and procs rows. ANALYZE_MB (default 256) sizes the analyze log. Takes
# about 15 minutes.
# Needs: hyperfine, wrk, prometheus-node-exporter, tmux, htop, glances, valgrind, GNU time.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/release-rows}
base=${2:-}
base_build=
[[ -n $base && $base == */src/cli/sparkops ]] && base_build=${base%/src/cli/sparkops}
mkdir -p "$out"
bin=build/release/src/cli/sparkops
[[ -x $bin ]] || { cmake --preset release >/dev/null && cmake --build --preset release -j1; }
if [[ ! -x build/bench/bench/sample_bench ]]; then
  cmake --preset bench >/dev/null
  cmake --build --preset bench -j1 --target sample_bench fake_nvml
fi
run() {  # name, command...
  local name=$1
  shift
  echo "== $name: $*"
  "$@" >"$out/$name.txt" 2>&1 || echo "   (exit $? — see $out/$name.txt)"
}
run status env BENCH_OUT="$out/status.md" bench/status_vs_skill.sh "$bin" $base
run offline_rss bench/offline_rss.sh build/release $base_build
run procs env BENCH_MD="$out/procs_fixture.md" BENCH_MD2="$out/procs_live.md" \
  bench/procs_bench.sh build/release 2000 $base_build
run serve bench/serve_bench.sh build/release 10
run top bench/top_cpu.sh build/release 20 1
run sample_tick build/bench/bench/sample_bench --benchmark_min_time=1 \
  --benchmark_filter='BM_Tick(HostOnly|FakeNvml)/format:[0-2]$'
run sample_vs_shell bench/sample_vs_shell.sh build/release 10
run analyze bench/analyze_throughput.sh "$bin" "${ANALYZE_MB:-256}" $base
run analyze_profile bench/analyze_profile.sh "$bin" 4 $base
echo "outputs in $out"
