#!/usr/bin/env bash
# CPU per refresh of `sparkops top`, the interactive view, measured in a detached tmux pane (it needs
# a terminal). Each run starts top, lets it refresh for SECONDS, presses q and records the
# getrusage of the top process (user + sys). Two runs per configuration, a long and a short one:
#   CPU per refresh = (CPU_long - CPU_short) / ((SECONDS_long - SECONDS_short) / interval)
# so start-up (loading the binary, config, NVML init, ncurses set-up) cancels out.
# Usage: bench/top_cpu.sh [BUILD_DIR] [SECONDS] [INTERVAL]   (defaults: build/dev, 20, 1)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
secs=${2:-20}
interval=${3:-1}
bin=$PWD/$build/src/cli/sparkops
nvml=$PWD/$build/tests/gpu/libfake_nvml.so
[[ -x $bin && -f $nvml ]] || { echo "build $bin and fake_nvml first" >&2; exit 2; }
command -v tmux >/dev/null || { echo "tmux is needed (tools/install-deps.sh --test)" >&2; exit 2; }
tmp=$(mktemp -d)
sock="sparkops-bench-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT

cat > "$tmp/rusage.py" <<'PY'
import resource, subprocess, sys
out, cmd = sys.argv[1], sys.argv[2:]
subprocess.run(cmd)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(out, "w").write(f"{r.ru_utime + r.ru_stime:.4f}\n")
PY

run_once() {  # seconds, root, gpu, scenario -> CPU seconds of the top process
  local s=$1 root=$2 gpu=$3 scenario=$4 out="$tmp/cpu.$RANDOM"
  tmux -L "$sock" new-session -d -s b -x 80 -y 24 \
    "env LANG=C.UTF-8 SPARKOPS_NVML_LIB=$nvml FAKE_NVML_SCENARIO=$PWD/tests/fixtures/nvml/$scenario \
     python3 $tmp/rusage.py $out $bin --root $root top --interval $interval --gpu $gpu"
  sleep "$s"
  tmux -L "$sock" send-keys -t b q
  for _ in $(seq 1 100); do [[ -s $out ]] && break; sleep 0.1; done
  tmux -L "$sock" kill-server 2>/dev/null || true
  cat "$out"
}

measure() {  # label, root, gpu, scenario
  local short=2
  local c_long c_short
  c_long=$(run_once "$secs" "$2" "$3" "$4")
  c_short=$(run_once "$short" "$2" "$3" "$4")
  python3 - "$1" "$c_long" "$c_short" "$secs" "$short" "$interval" <<'PY'
import sys
label, cl, cs, sl, ss, i = sys.argv[1], *map(float, sys.argv[2:])
refreshes = (sl - ss) / i
per = (cl - cs) / refreshes
print(f"| {label} | {i:g} s | {refreshes:.0f} | {cs*1000:.0f} ms | {per*1e3:.2f} ms | {per/i*100:.2f} % |")
PY
}

echo "| configuration | interval | refreshes | CPU of a 2 s run (start-up) | CPU per refresh | share of one core |"
echo "|---|---|---|---|---|---|"
measure "fixture gb10-finetune, fake NVML" "$PWD/tests/fixtures/roots/gb10-finetune" nvml gb10-counters-advancing
measure "fixture procs/vllm_uncapped_orphan (11 PIDs), fake NVML" "$PWD/tests/fixtures/procs/vllm_uncapped_orphan" nvml gb10
measure "this machine's /proc ($(ls -d /proc/[0-9]* | wc -l) PIDs), --gpu none" / none gb10
