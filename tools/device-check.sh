#!/usr/bin/env bash
# device-check.sh: one run on a real NVIDIA machine (driver present, maybe no build tools, no
# network) that records what sparkops' GPU layer sees there. Writes at most 8 files into $OUT
# (default ./device-check-out):
#   summary.txt   host, tools found, what ran, timings, where each step stopped
#   smi.txt       nvidia-smi table, -q excerpts (PERFORMANCE, TEMPERATURE, MEMORY, POWER, CLOCK),
#                 the two CSV queries sparkops runs (new and old reasons field name)
#   raw-probe.txt nvml_raw_probe: every NVML return code, field ids 74-76/251-255/269-273
#   probe.txt     gpu_probe: the NVML GpuSource's figures and which are absent (then nvidia-smi's)
#   status.json   sparkops status --json (when sparkops could be built)
#   status.txt    sparkops status (human form)
#   build.log     last lines of the build / compile logs
# Degrades: no cmake or missing -dev packages -> compile the probes with g++ directly; no g++ ->
# any C++ compiler for the raw probe; none -> nvidia-smi outputs only. Whole run < 4 minutes.
# Test it without a GPU (docs/gpu.md): SPARKOPS_NVML_LIB=<fake lib> FAKE_NVML_SCENARIO=<file>
# FAKE_SMI_DIR=<replay dir> PATH=tests/gpu/fake_nvidia_smi:$PATH [DEVICE_CHECK_SKIP_BUILD=1].
set -u

REPO=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$PWD/device-check-out}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sparkops-device-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
JOBS=$(nproc 2>/dev/null || echo 4)
START=$(date +%s)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
: >"$OUT/build.log"

say() { printf '%s\n' "$*" | tee -a "$SUMMARY" >&2; }
elapsed() { echo $(($(date +%s) - START)); }
have() { command -v "$1" >/dev/null 2>&1; }
# Seconds left before the 225 s mark (keeps the whole run under 4 minutes), at least 5.
left() { local l=$((225 - $(elapsed))); [ "$l" -lt 5 ] && l=5; echo "$l"; }

say "sparkops device-check $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "host: $(uname -srm) cpus: $JOBS"
say "repo: $REPO ($(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout'))"
for tool in nvidia-smi cmake ninja g++ c++ clang++ pkg-config; do
  say "tool $tool: $(command -v "$tool" || echo missing)"
done
say "SPARKOPS_NVML_LIB=${SPARKOPS_NVML_LIB:-<unset>}"
if have ldconfig; then
  say "ldconfig libnvidia-ml: $(ldconfig -p 2>/dev/null | grep -m1 'libnvidia-ml.so.1' | sed 's/^[[:space:]]*//' || true)"
fi

# 1. nvidia-smi as the user sees it.
SMI=$OUT/smi.txt
: >"$SMI"
smi() {
  printf '\n$ nvidia-smi %s\n' "$*" >>"$SMI"
  timeout 15 nvidia-smi "$@" >>"$SMI" 2>&1
  printf '[exit %s]\n' "$?" >>"$SMI"
}
if have nvidia-smi; then
  smi
  smi -q -d PERFORMANCE,TEMPERATURE,MEMORY,POWER,CLOCK
  smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,utilization.gpu,utilization.memory,pstate,clocks_event_reasons.active,memory.total,memory.used,memory.free --format=csv,noheader,nounits
  smi --query-gpu=index,clocks_throttle_reasons.active --format=csv,noheader,nounits
  smi --query-gpu=index,name,memory.total,power.draw,temperature.gpu --format=csv
  smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits
  say "nvidia-smi: done ($(elapsed) s)"
else
  echo "nvidia-smi not on PATH" >>"$SMI"
  say "nvidia-smi: missing"
fi

# 2. Build sparkops (release preset) when the toolchain and -dev packages are there.
SPARKOPS=""
BUILD=""
if [ -n "${SPARKOPS_BIN:-}" ]; then
  # A binary built elsewhere and carried here (tools/device-bundle.sh): no toolchain needed.
  SPARKOPS=$SPARKOPS_BIN
  say "build: using prebuilt $SPARKOPS_BIN"
elif [ -n "${DEVICE_CHECK_SKIP_BUILD:-}" ]; then
  say "build: skipped (DEVICE_CHECK_SKIP_BUILD set)"
elif have cmake && have g++ && [ -f "$REPO/CMakePresets.json" ]; then
  BUILD=$REPO/build/release
  if (cd "$REPO" && timeout "$(left)" cmake --preset release) >"$WORK/configure.log" 2>&1; then
    if timeout "$(left)" cmake --build "$BUILD" -j"$JOBS" --target sparkops >"$WORK/build.log" 2>&1; then
      SPARKOPS=$BUILD/sparkops
      [ -x "$SPARKOPS" ] || SPARKOPS=$(find "$BUILD" -maxdepth 3 -type f -name sparkops -perm -u+x | head -1)
      say "build: sparkops built ($(elapsed) s)"
    else
      say "build: cmake --build failed or timed out ($(elapsed) s)"
    fi
  else
    say "build: cmake --preset release failed (missing -dev packages?) ($(elapsed) s)"
  fi
  { echo "== configure"; tail -n 25 "$WORK/configure.log"; echo "== build";
    tail -n 40 "$WORK/build.log" 2>/dev/null; } >>"$OUT/build.log"
else
  say "build: skipped (cmake or g++ missing)"
fi

if [ -n "$SPARKOPS" ]; then
  timeout 30 "$SPARKOPS" status --json >"$OUT/status.json" 2>>"$OUT/build.log"
  say "sparkops status --json: exit $? ($(elapsed) s)"
  timeout 30 "$SPARKOPS" status >"$OUT/status.txt" 2>&1
  say "sparkops status: exit $?"
fi

# 3. The probes. gpu_probe needs fmt + tl-expected headers; nvml_raw_probe only a compiler.
CXX_BIN=""
for c in g++ c++ clang++; do
  if have "$c"; then CXX_BIN=$c; break; fi
done
PROBE=$OUT/probe.txt
RAW=$OUT/raw-probe.txt
if [ -n "$CXX_BIN" ]; then
  if timeout "$(left)" "$CXX_BIN" -std=c++17 -O1 -I"$REPO/src" \
      "$REPO/tests/gpu/probe/nvml_raw_probe.cpp" -o "$WORK/nvml_raw_probe" -ldl \
      >>"$OUT/build.log" 2>&1; then
    timeout 30 "$WORK/nvml_raw_probe" >"$RAW" 2>&1
    say "nvml_raw_probe: exit $? ($(elapsed) s)"
  else
    say "nvml_raw_probe: compile failed (see build.log)"
  fi
  # gpu_probe: link against the release build's libraries when they exist, else compile
  # src/gpu and src/base directly, in parallel (base/version.hpp is generated by CMake: make one).
  [ -n "${GPU_PROBE_BIN:-}" ] || {
  mkdir -p "$WORK/gen/base" "$WORK/obj"
  sed 's/@PROJECT_VERSION@/device-check/' "$REPO/src/base/version.hpp.in" >"$WORK/gen/base/version.hpp" 2>/dev/null
  CXXFLAGS_PROBE="-std=c++20 -O1 -I$REPO/src -I$WORK/gen"
  LIBS_A=""
  if [ -n "$SPARKOPS" ] && [ -f "$BUILD/src/gpu/libsparkops_gpu.a" ] && [ -f "$BUILD/src/base/libsparkops_base.a" ]; then
    LIBS_A="$BUILD/src/gpu/libsparkops_gpu.a $BUILD/src/base/libsparkops_base.a"
    SOURCES="$REPO/tests/gpu/probe/gpu_probe.cpp"
  else
    SOURCES=$(ls "$REPO/tests/gpu/probe/gpu_probe.cpp" "$REPO"/src/gpu/*.cpp "$REPO"/src/base/*.cpp)
  fi
  export CXX_BIN CXXFLAGS_PROBE WORK
  # shellcheck disable=SC2086
  printf '%s\n' $SOURCES | timeout "$(left)" xargs -P "$JOBS" -I{} sh -c \
    '$CXX_BIN $CXXFLAGS_PROBE -c "$1" -o "$WORK/obj/$(basename "$1").o"' _ {} >>"$OUT/build.log" 2>&1
  # shellcheck disable=SC2086
  timeout "$(left)" "$CXX_BIN" "$WORK"/obj/*.o $LIBS_A -o "$WORK/gpu_probe" -lfmt -ldl \
      >>"$OUT/build.log" 2>&1
  }
  PROBE_BIN=${GPU_PROBE_BIN:-$WORK/gpu_probe}
  if [ -x "$PROBE_BIN" ]; then
    {
      echo "== SPARKOPS_GPU_BACKEND=nvml"
      SPARKOPS_GPU_BACKEND=nvml timeout 30 "$PROBE_BIN" 2
      echo "[exit $?]"
      echo "== SPARKOPS_GPU_BACKEND=nvidia-smi"
      SPARKOPS_GPU_BACKEND=nvidia-smi timeout 60 "$PROBE_BIN" 1
      echo "[exit $?]"
    } >"$PROBE" 2>&1
    say "gpu_probe: done ($(elapsed) s)"
  else
    say "gpu_probe: compile failed (fmt / tl-expected headers missing?), see build.log"
  fi
else
  say "probes: no C++ compiler; only nvidia-smi outputs were recorded"
fi

say "total: $(elapsed) s; files in $OUT:"
ls -1 "$OUT" | tee -a "$SUMMARY" >&2
exit 0
