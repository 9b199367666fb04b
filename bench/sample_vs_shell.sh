#!/usr/bin/env bash
# Whole-process cost of sampling once a second: `sparkops sample` (fixture root + the fake
# libnvidia-ml, so it runs on any box) against a thermal-sample.sh-style shell loop that reads the
# same sysfs/procfs files with cat/awk each second (nvidia-smi itself cannot run here).
# CPU = user + sys of the whole process tree (GNU time), RSS = peak resident set.
# Usage: bench/sample_vs_shell.sh [BUILD_DIR] [SECONDS]   (defaults: build/sample-rel, 10)
# The issue asks for 60 s; 10 s at 1 Hz gives the same per-sample figures, scale CPU x6 for 60 s.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/sample-rel}
secs=${2:-10}
bin=$build/src/cli/sparkops
nvml=$build/tests/gpu/libfake_nvml.so
root=$PWD/tests/fixtures/roots/gb10-finetune
[[ -x $bin && -f $nvml ]] || { echo "build $bin and fake_nvml first (-DSPARKOPS_BUILD_BENCH=ON)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

measure() {  # label, command...
  local label=$1; shift
  /usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" >/dev/null 2>&1
  read -r user sys rss <"$tmp/time"
  awk -v l="$label" -v u="$user" -v s="$sys" -v r="$rss" -v n="$secs" 'BEGIN {
    cpu = u + s; printf "| %s | %d | %.2f | %.0f | %.1f |\n", l, n, cpu, cpu / n * 1e6, r / 1024 }'
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
