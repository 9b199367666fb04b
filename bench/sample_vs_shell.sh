#!/usr/bin/env bash
# Whole-process cost of sampling once a second: `sparkops sample` (fixture root + the fake
# libnvidia-ml, so it runs on any box) against a thermal-sample.sh-style shell loop that reads the
# same sysfs/procfs files with cat/awk each second (nvidia-smi itself cannot run here).
# CPU = user + sys of the whole process tree (getrusage), RSS = peak resident set of the largest
# process in the tree.
# Usage: bench/sample_vs_shell.sh [BUILD_DIR] [SECONDS]   (defaults: build/release, 10)
# The fake libnvidia-ml is BUILD_DIR's, else build/bench's or build/dev's (FAKE_NVML=path overrides).
# The issue asks for 60 s; 10 s at 1 Hz gives the same per-sample figures, scale CPU x6 for 60 s.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
secs=${2:-10}
bin=$build/src/cli/sparkops
nvml=${FAKE_NVML:-}
for d in "$build" build/bench build/dev; do
  [[ -z $nvml && -f $d/tests/gpu/libfake_nvml.so ]] && nvml=$PWD/$d/tests/gpu/libfake_nvml.so
done
root=$PWD/tests/fixtures/roots/gb10-finetune
[[ -x $bin && -n $nvml ]] || { echo "build $bin and fake_nvml (a build with tests) first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

measure() {  # label, command...  (getrusage of the child tree: finer than GNU time's 10 ms)
  local label=$1; shift
  python3 - "$label" "$secs" "$@" <<'PY'
import resource, subprocess, sys
label, n, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
import tempfile
with tempfile.NamedTemporaryFile() as t:
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t.name] + cmd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    rss_kib = int(open(t.name).read().split()[-1])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = r.ru_utime + r.ru_stime
print(f"| {label} | {n} | {cpu:.3f} | {cpu / n * 1e6:.0f} | {rss_kib / 1024:.1f} |")
PY
}

shell_loop() {
  cat >"$tmp/loop.sh" <<LOOP
i=0
while [ \$i -lt $secs ]; do
  ts=\$(date '+%Y/%m/%d %H:%M:%S.%3N')
  t=\$(cat $root/sys/class/hwmon/hwmon*/temp*_input 2>/dev/null | awk 'm<\$1{m=\$1} END{print m/1000}')
  mem=\$(awk '/^MemAvailable:/{print \$2}' $root/proc/meminfo)
  psi=\$(awk '/^some/{print \$5}' $root/proc/pressure/memory)
  maj=\$(awk '/^pgmajfault /{print \$2}' $root/proc/vmstat)
  echo "\$ts, \$t, \$mem, \$psi, \$maj" >>$tmp/shell.log
  i=\$((i+1))
  sleep 1
done
LOOP
  bash "$tmp/loop.sh"
}
export -f shell_loop
export tmp secs root

echo "| sampler (1 Hz) | samples | CPU s | CPU µs/sample | peak RSS MiB |"
echo "|---|---|---|---|---|"
SPARKOPS_NVML_LIB=$nvml FAKE_NVML_SCENARIO=$PWD/tests/fixtures/nvml/gb10-counters-advancing \
  measure "sparkops sample --format nvidia-smi (fake NVML)" \
  "$bin" --root "$root" sample --interval 1 --count "$secs" --out "$tmp/a.log"
SPARKOPS_NVML_LIB=$nvml FAKE_NVML_SCENARIO=$PWD/tests/fixtures/nvml/gb10-counters-advancing \
  measure "sparkops sample --format extended (fake NVML)" \
  "$bin" --root "$root" sample --interval 1 --count "$secs" --format extended --out "$tmp/b.csv"
measure "sparkops sample --format extended --gpu none" \
  "$bin" --root "$root" sample --interval 1 --count "$secs" --format extended --gpu none --out "$tmp/c.csv"
measure "shell loop: date + cat/awk of the same files" bash -c shell_loop
# Start-up alone (one sample): subtract to get the steady per-sample cost of a long run.
secs=1 SPARKOPS_NVML_LIB=$nvml FAKE_NVML_SCENARIO=$PWD/tests/fixtures/nvml/gb10-counters-advancing \
  measure "sparkops sample --format extended (fake NVML), start-up + 1 sample" \
  "$bin" --root "$root" sample --interval 1 --count 1 --format extended --out "$tmp/d.csv"
