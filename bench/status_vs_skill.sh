#!/usr/bin/env bash
# Whole-process cost of `sparkops status --json` against the skill's own check, on this machine, in
# one hyperfine run. Usage: bench/status_vs_skill.sh [path/to/sparkops] (default: the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/src/cli/sparkops}
if [[ ! -x $bin ]]; then
  cmake --preset release >/dev/null && cmake --build --preset release --target sparkops >/dev/null
fi
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }
skill="free -g | awk 'NR==2 {print \$4}'; ps aux | grep -E 'vllm|ollama|trl|axolotl' | grep -v grep"
hyperfine --warmup 20 --runs 300 -N -i --export-markdown "${BENCH_OUT:-/dev/stdout}" \
  "$bin status --json" \
  "sh -c \"$skill\""
