#!/usr/bin/env bash
# The one device check for a real NVIDIA GPU (see docs/gpu.md "Device check"): run from the repo
# root with .device/ carried (tools/device-bundle.sh). Writes at most 8 files into $OUT.
# 1. tools/device-check.sh with the carried binary (nvidia-smi outputs, raw NVML probe, NVML source
#    probe, status).  2. Under a real load (a PyTorch bf16 matmul loop when torch is there): sample
#    in the extended and nvidia-smi formats, and procs, so power, clocks, counters and per-process
#    GPU memory are seen moving.
set -u
OUT=${OUT:-$PWD/device-run-out}
mkdir -p "$OUT"
export OUT SPARKOPS_BIN=$PWD/.device/sparkops GPU_PROBE_BIN=$PWD/.device/gpu_probe
timeout 200 tools/device-check.sh || echo "device-check exit $?" >>"$OUT/summary.txt"
# At most 8 files come back: fold the small ones into summary.txt.
for f in build.log status.txt; do
  [ -f "$OUT/$f" ] && { printf '\n== %s\n' "$f"; cat "$OUT/$f"; } >>"$OUT/summary.txt" && rm -f "$OUT/$f"
done
LOAD=$OUT/load.txt
{
  echo "== load: bf16 matmul loop for ~25 s"
  load_pid=""
  if python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    python3 - <<'PY' &
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
t = time.time()
while time.time() - t < 25:
    for _ in range(20):
        b = a @ a
    torch.cuda.synchronize()
PY
    load_pid=$!
    sleep 4
  else
    echo "no torch with CUDA: sampling an idle GPU"
  fi
  echo "== sparkops procs"
  timeout 30 "$SPARKOPS_BIN" procs; echo "[exit $?]"
  echo "== sparkops sample --format extended --interval 0.5 --count 24"
  timeout 60 "$SPARKOPS_BIN" sample --format extended --interval 0.5 --count 24 --out "$OUT/thermal-extended.csv" 2>&1
  echo "[exit $?]"
  echo "== sparkops sample (nvidia-smi format) --interval 1 --count 3, beside nvidia-smi itself"
  timeout 30 "$SPARKOPS_BIN" sample --interval 1 --count 3 --out "$OUT/thermal-smi.log" 2>&1; echo "[exit $?]"
  timeout 15 nvidia-smi --query-gpu=timestamp,temperature.gpu,power.draw --format=csv -l 1 -c 3 2>&1 || \
    timeout 15 nvidia-smi --query-gpu=timestamp,temperature.gpu,power.draw --format=csv 2>&1
  echo "== sparkops status (under load)"
  timeout 30 "$SPARKOPS_BIN" status; echo "[exit $?]"
  [ -n "$load_pid" ] && wait "$load_pid"
  echo "== sparkops status --gpu nvidia-smi (after load)"
  timeout 60 "$SPARKOPS_BIN" status --gpu nvidia-smi; echo "[exit $?]"
} >"$LOAD" 2>&1
cat "$OUT/thermal-smi.log" >>"$LOAD" 2>/dev/null
for f in "$OUT"/*events*; do [ -f "$f" ] && { printf '\n== %s\n' "$f"; cat "$f"; } >>"$LOAD" && rm -f "$f"; done
rm -f "$OUT/thermal-smi.log"
ls -la "$OUT"
