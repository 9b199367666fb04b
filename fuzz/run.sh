#!/usr/bin/env bash
# fuzz/run.sh [SECONDS] [TARGET...]: builds the libFuzzer targets named (all of them when none is
# named; clang-14, ASan + UBSan) in build/fuzz, then runs each for SECONDS (default 20) on a
# corpus gathered from tests/fixtures, fuzz/seeds/<target>/ (committed seeds and crash-*
# regressions) and, when present, the shared corpus. Prints execs and time per target; exits
# non-zero when any target crashes, leaks, times out or fails to build. A crashing input is
# copied to fuzz/seeds/<target>/crash-<sha1> so it becomes a regression seed once fixed.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
seconds=${1:-20}
shift || true
build=${SPARKOPS_FUZZ_BUILD:-$repo/build/fuzz}
fx=$repo/tests/fixtures
shared=${SPARKOPS_SHARED_CORPUS:-$repo/../shared/corpus}

all_targets=(meminfo psi vmstat hwmon_value proc_cmdline proc_status smi_csv smi_table smi_q
             safetensors_header config_json gguf_header quantization_config trainlog_detect
             trainlog_format trainer_state thermal_csv oom_text toml_config writers web_config
             estimator serving_args)
targets=("${all_targets[@]}")
build_targets=()
if [[ $# -gt 0 ]]; then
  targets=("$@")
  # Only the named targets are built; a name that is not a target is refused before any build.
  for t in "${targets[@]}"; do
    if [[ " ${all_targets[*]} " != *" $t "* ]]; then
      echo "fuzz/run.sh: unknown target $t (targets: ${all_targets[*]})" >&2
      exit 2
    fi
    build_targets+=(--target "fuzz_$t")
  done
fi

if ! command -v clang++-14 >/dev/null; then
  echo "fuzz/run.sh: clang++-14 not found (apt-get install clang-14)" >&2
  exit 2
fi
cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 >/dev/null || exit 2
cmake --build "$build" "${build_targets[@]}" -- -j"${SPARKOPS_FUZZ_JOBS:-2}" >"$build/build.log" 2>&1 || {
  tail -30 "$build/build.log" >&2
  echo "fuzz/run.sh: build failed (full log: $build/build.log)" >&2
  exit 2
}

# Seeds from the fixtures: files named by find(1) expressions per target.
seed_files() {
  case $1 in
    meminfo) find "$fx" -name meminfo -type f ;;
    psi) find "$fx/roots" -path '*/proc/pressure/*' -type f ;;
    vmstat) find "$fx" -name vmstat -type f ;;
    hwmon_value) find "$fx/roots" \( -path '*hwmon*' -o -path '*thermal_zone*' -o -path '*cpufreq*' \) \
                   -type f -size -64c | head -200 ;;
    proc_cmdline) find "$fx/procs" \( -name cmdline -o -name environ -o -name stat \) -type f ;;
    proc_status) find "$fx/procs" \( -name status -o -name smaps_rollup \) -type f ;;
    smi_csv) find "$fx" \( -name '*.csv' -path '*nvidia-smi*' -o -name 'gpu-apps.csv' \
                -o -name 'query-*.txt' \) -type f ;;
    smi_table) find "$fx/nvidia-smi" -name 'nvidia-smi-default-*' -type f ;;
    smi_q) find "$fx/nvidia-smi" -name 'nvidia-smi-q-*' -type f ;;
    safetensors_header) find "$fx" -name '*.safetensors' -size -64k -type f ;;
    config_json | quantization_config | estimator) find "$fx" -name 'config.json' -type f ;;
    gguf_header) find "$fx" -name '*.gguf' -size -64k -type f ;;
    trainlog_detect | trainlog_format) find "$fx/logs" -type f ;;
    trainer_state) find "$fx" -name '*trainer_state*.json' -type f ;;
    thermal_csv) find "$fx/sample" "$fx/golden/sample" -type f \( -name '*.csv' -o -name '*.log' \) ;;
    oom_text) find "$fx/oom" -type f -name '*.txt' ;;
    serving_args) find "$fx/serving/oom" -type f ;;
    toml_config) find "$fx" -name '*.toml' -type f ;;
    web_config) find "$repo/deploy/tls" "$fx/prometheus" -name '*.yml' -type f ;;
    writers) find "$fx/procs" \( -name cmdline -o -name stat \) -type f | head -100
             find "$fx/roots" -path '*hwmon*' -name '*name' -type f ;;
  esac
}
shared_dir() {
  case $1 in
    trainlog_detect | trainlog_format) echo "$shared/logs" ;;
    oom_text | serving_args) echo "$shared/oom" ;;
    smi_table | smi_q | smi_csv) echo "$shared/nvidia-smi" ;;
  esac
}

failed=0
printf '%-20s %12s %8s %8s  %s\n' target execs seconds exec/s result
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  if [[ ! -x $bin ]]; then
    echo "fuzz/run.sh: unknown target $t" >&2
    failed=1
    continue
  fi
  corpus=$build/corpus/$t
  artifacts=$build/artifacts/$t
  mkdir -p "$corpus" "$artifacts" "fuzz/seeds/$t"
  while IFS= read -r f; do
    [[ -n $f ]] && cp -f "$f" "$corpus/fx-$(sha1sum <"$f" | cut -c1-12)"
  done < <(seed_files "$t")
  sd=$(shared_dir "$t")
  if [[ -n $sd && -d $sd ]]; then
    find "$sd" -type f -size -1M | while IFS= read -r f; do
      cp -f "$f" "$corpus/sh-$(sha1sum <"$f" | cut -c1-12)"
    done
  fi
  log=$build/$t.log
  start=$(date +%s.%N)
  "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "fuzz/seeds/$t" >"$log" 2>&1
  rc=$?
  elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  result=ok
  if [[ $rc -ne 0 ]]; then
    failed=1
    result="CRASH (rc $rc, log $log)"
    for a in "$artifacts"/*; do
      [[ -f $a ]] || continue
      dest=fuzz/seeds/$t/crash-$(sha1sum <"$a" | cut -c1-40)
      cp -f "$a" "$dest"
      result="$result reproducer $dest"
      rm -f "$a"
    done
    grep -m3 -E 'ERROR: |runtime error|SUMMARY' "$log" >&2
  fi
  printf '%-20s %12s %8s %8s  %s\n' "$t" "${execs:-?}" "$elapsed" "${rate:-?}" "$result"
done
exit $failed
