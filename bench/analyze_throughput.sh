#!/usr/bin/env bash
# Whole-process throughput of `sparkops analyze` on a ~1 GB log built from the corpus formats
# (an HF Trainer tqdm log: '\r' redraws, metric dicts, an eval and checkpoint every 500 steps), with
# peak memory, compared in the same run against `wc -l` on the same file (memory speed: the
# floor for any line-oriented reader) and an awk one-liner that only extracts the tqdm rate.
# Usage: bench/analyze_throughput.sh [SPARKOPS_BINARY] [SIZE_MB] [BASELINE_SPARKOPS_BINARY]
# The per-core figure is bytes / (user + sys) of each command; analyze runs on one thread.
set -euo pipefail
bin="${1:-build/release/src/cli/sparkops}"
size_mb="${2:-1024}"
base="${3:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$work/train.log"

"$(dirname "$0")/hf_tqdm_log.py" "$log" "$size_mb"
bytes=$(stat -c %s "$log")
echo "log: $bytes bytes"
cat "$log" > /dev/null  # warm the page cache
cmds=("$bin analyze --log $log --json --start 2025-11-09T00:00:00Z > /dev/null")
[[ -n $base ]] && cmds+=("$base analyze --log $log --json --start 2025-11-09T00:00:00Z > /dev/null")
hyperfine --warmup 1 --runs 3 --export-json "$work/h.json" "${cmds[@]}" \
  "wc -l $log > /dev/null" \
  "awk 'BEGIN{RS=\"\\r\"} match(\$0, /[0-9.]+s\\/it/) {n++} END{print n}' $log > /dev/null"
python3 - "$work/h.json" "$bytes" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); b = int(sys.argv[2])
for r in d["results"]:
    cpu = r["user"] + r["system"]
    print(f"{r['command'][:60]:60s}  wall {r['mean']:.2f} s  {b / r['mean'] / 1e6:.0f} MB/s"
          f"  CPU {cpu:.2f} s  {b / cpu / 1e6:.0f} MB/s per core")
PY
/usr/bin/time -f "sparkops analyze peak RSS: %M KiB" "$bin" analyze --log "$log" --json --start 2025-11-09T00:00:00Z > /dev/null
