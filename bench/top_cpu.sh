#!/usr/bin/env bash
# CPU per refresh of `sparkops top`, the interactive view, measured in a detached tmux pane (it needs
# a terminal), against htop and glances (Python + psutil, the same stack as nvitop, which Debian 12
# does not package) refreshing this machine's /proc at the same interval. Each run starts the
# program, lets it refresh for SECONDS, presses q and records the getrusage of the process
# (user + sys). Two runs per configuration, a long and a short one:
#   CPU per refresh = (CPU_long - CPU_short) / ((SECONDS_long - SECONDS_short) / interval)
# so start-up (loading the binary, config, NVML init, ncurses set-up) cancels out.
# Usage: bench/top_cpu.sh [BUILD_DIR] [SECONDS] [INTERVAL]   (defaults: build/release, 20, 1)
# The fake libnvidia-ml for the fixture rows is BUILD_DIR's, else build/bench's, else build/dev's
# (FAKE_NVML=path overrides); without one those rows are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
secs=${2:-20}
interval=${3:-1}
bin=$PWD/$build/src/cli/sparkops
nvml=${FAKE_NVML:-}
for d in "$build" build/bench build/dev; do
  [[ -z $nvml && -f $d/tests/gpu/libfake_nvml.so ]] && nvml=$PWD/$d/tests/gpu/libfake_nvml.so
done
[[ -x $bin ]] || { echo "build $bin first" >&2; exit 2; }
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

run_once() {  # seconds, command... -> CPU seconds of the command's process tree
  local s=$1 out="$tmp/cpu.$RANDOM"
  shift
  tmux -L "$sock" new-session -d -s b -x 80 -y 24 "python3 $tmp/rusage.py $out $*"
  sleep "$s"
  tmux -L "$sock" send-keys -t b q
  for _ in $(seq 1 100); do [[ -s $out ]] && break; sleep 0.1; done
  tmux -L "$sock" kill-server 2>/dev/null || true
  cat "$out"
}

top_cmd() {  # root, gpu, scenario
  echo "env LANG=C.UTF-8 SPARKOPS_NVML_LIB=$nvml FAKE_NVML_SCENARIO=$PWD/tests/fixtures/nvml/$3" \
    "$bin --root $1 top --interval $interval --gpu $2"
}

measure() {  # label, command (one string)
  local short=2
  local c_long c_short
  c_long=$(run_once "$secs" "$2")
  c_short=$(run_once "$short" "$2")
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
if [[ -n $nvml ]]; then
  measure "sparkops top, fixture gb10-finetune, fake NVML" \
    "$(top_cmd "$PWD/tests/fixtures/roots/gb10-finetune" nvml gb10-counters-advancing)"
  measure "sparkops top, fixture procs/vllm_uncapped_orphan (11 PIDs), fake NVML" \
    "$(top_cmd "$PWD/tests/fixtures/procs/vllm_uncapped_orphan" nvml gb10)"
fi
pids=$(ls -d /proc/[0-9]* | wc -l)
measure "sparkops top, this machine's /proc ($pids PIDs), --gpu none" "$(top_cmd / none gb10)"
# tenths of a second for htop's delay
command -v htop >/dev/null &&
  measure "htop $(htop --version | awk 'NR==1{print $2}'), this machine's /proc" \
    "env TERM=xterm HOME=$tmp htop -d $(awk -v i="$interval" 'BEGIN{print int(i*10)}')"
command -v glances >/dev/null &&
  measure "glances $(glances -V 2>&1 | awk 'NR==1{print $2}'), this machine's /proc" \
    "env TERM=xterm HOME=$tmp glances -t $interval"
