#!/usr/bin/env bash
# Whole-process cost of `sparkops status --json` against the skill's own check, on this machine, in
# one hyperfine run. Usage: bench/status_vs_skill.sh [path/to/sparkops] [path/to/baseline/sparkops]
# (default: the release build). With a second binary (an older build) it is timed in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/release/src/cli/sparkops}
base=${2:-}
if [[ ! -x $bin ]]; then
  cmake --preset release >/dev/null && cmake --build --preset release --target sparkops >/dev/null
fi
command -v hyperfine >/dev/null || { echo "hyperfine is needed (apt-get install hyperfine)" >&2; exit 2; }
skill="free -g | awk 'NR==2 {print \$4}'; ps aux | grep -E 'vllm|ollama|trl|axolotl' | grep -v grep"
cmds=(-n "sparkops status --json" "$bin status --json")
[[ -n $base ]] && cmds+=(-n "sparkops status --json (baseline build)" "$base status --json")
hyperfine --warmup 20 --runs "${RUNS:-300}" -N -i --export-markdown "${BENCH_OUT:-/dev/stdout}" \
  "${cmds[@]}" -n "skill pipeline (sh -c free|awk; ps|grep)" "sh -c \"$skill\""
