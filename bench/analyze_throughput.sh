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

# One block = 500 steps; repeated (step numbers keep increasing) until the file reaches size_mb.
python3 - "$log" "$size_mb" <<'PY'
import sys
path, size = sys.argv[1], int(sys.argv[2]) * 1024 * 1024
total = 10**9
with open(path, "w") as f:
    f.write("INFO:__main__:Transformers version: 4.57.6\n")
    step, written, elapsed = 0, 0, 0
    while written < size:
        parts = []
        for _ in range(500):
            step += 1
            elapsed += 21
            h, m, s = elapsed // 3600, elapsed // 60 % 60, elapsed % 60
            parts.append(f"\r  1%|          | {step}/{total} [{h}:{m:02}:{s:02}<10:20:10, 21.{step % 100:02}s/it]")
            if step % 10 == 0:
                parts.append("\n{'loss': 1.2345, 'grad_norm': 0.52, 'learning_rate': 0.0002, 'epoch': 0.1}\n")
        parts.append("\n{'eval_loss': 1.1, 'eval_runtime': 61.2, 'eval_samples_per_second': 3.2, 'epoch': 0.5}\n")
        parts.append(f"Saving model checkpoint to out/checkpoint-{step}\n")
        block = "".join(parts)
        f.write(block)
        written += len(block)
PY
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
