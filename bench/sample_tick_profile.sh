#!/usr/bin/env bash
# Where a sample tick's CPU goes, repeatably: sample_bench's fixed-count tick benchmarks under
# callgrind, counting instructions only inside Sampler::tick. Instructions per steady tick =
# (count for 1001 ticks - count for 1 tick) / 1000, so the first tick's sensor discovery is left
# out. Instruction counts do not move with the load of the machine, so before/after figures from a
# shared VM compare. Then the heaviest functions per tick (inclusive). CPU time per tick is
# sample_bench's own output.
# Usage: bench/sample_tick_profile.sh [BUILD_DIR] [BENCH]
#   BUILD_DIR: a build configured with -DSPARKOPS_BUILD_BENCH=ON (default build/bench)
#   BENCH:     BM_TickHostOnly (default) or BM_TickFakeNvml; the extended CSV format
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/bench}
bench=${2:-BM_TickHostOnly}
bin=$build/bench/sample_bench
[[ -x $bin ]] || { echo "build $bin first (-DSPARKOPS_BUILD_BENCH=ON, target sample_bench)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

count() {  # iterations -> instructions inside Sampler::tick
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1" \
    --toggle-collect='sparkops::sampling::Sampler::tick*' "$bin" \
    --benchmark_filter="^$bench/format:1/iterations:$1\$" >/dev/null 2>&1
  callgrind_annotate "$out/cg.$1" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
}
one=$(count 1)
many=$(count 1001)
echo "$bench (extended): $(((many - one) / 1000)) instructions per tick (first tick: $one)"
echo "heaviest functions, inclusive instructions per tick (1001-tick run):"
callgrind_annotate --inclusive=yes "$out/cg.1001" 2>/dev/null |
  awk '$1 ~ /^[0-9,]+$/ && $2 ~ /^\(/ { v = $1; gsub(",", "", v); $1 = ""; $2 = "";
       printf "  %8.0f %s\n", v / 1001, $0 }' | grep -v 'PROGRAM TOTALS' | head -30
