#!/bin/bash
# Whole-process comparison for `sparkops procs` (docs/benchmarks.md "## procs").
# Builds a fixture /proc with N processes (default 2000: ~5% inference servers and trainers with
# engine/worker children, the rest shells, daemons and kernel threads, each with stat, cmdline, status,
# smaps_rollup and environ) and times, with hyperfine:
#   sparkops --root TREE procs --json       (the fixture tree; no GPU is read for a captured tree)
#   sparkops procs --json --gpu none        (this machine's live /proc)
#   ps aux | grep -E 'vllm|ollama|trl|axolotl' | grep -v grep   (the skill's check, live /proc)
#   ps -eo pid,args                         (live /proc)
# ps cannot read a captured tree, so the ps rows run on the live machine; the process counts of both
# trees are printed so the comparison can be judged. A second run puts both on one tree of the same
# size: N sleeping processes are started on this machine (`sleep` under a shell, so each has a
# stat, cmdline, status...) and `sparkops procs --json --gpu none` and `ps -eo pid,args` read the
# live /proc with them; the sleepers are killed afterwards.
# Usage: bench/procs_bench.sh [BUILD_DIR] [N] [BASE_BUILD_DIR]
# BASE_BUILD_DIR (an older build) is timed in the same runs, for before/after figures.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build/release}
n=${2:-2000}
bin=$build/src/cli/sparkops
base=${3:+$3/src/cli/sparkops}
[ -x "$bin" ] || { echo "no sparkops binary at $bin (build the sparkops target first)" >&2; exit 2; }
tree=$(mktemp -d /tmp/sparkops-procs-bench.XXXXXX)
sleepers=()
cleanup() { for p in "${sleepers[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tree"; }
trap cleanup EXIT
python3 - "$tree" "$n" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
proc = os.path.join(root, "proc")
os.makedirs(os.path.join(proc, "self"))
open(os.path.join(proc, "uptime"), "w").write("350735.47 234388.90\n")
open(os.path.join(proc, "stat"), "w").write("cpu 1 2 3 4\nbtime 1762330000\n")
open(os.path.join(proc, "meminfo"), "w").write(
    "MemTotal: 125514548 kB\nMemFree: 50000000 kB\nMemAvailable: 60000000 kB\n")
open(os.path.join(proc, "self", "status"), "w").write("Name:\tsparkops\nNSpid:\t1234\n")
shapes = [
    (["/usr/sbin/sshd", "-D"], None), (["-bash"], None), (["/usr/lib/systemd/systemd-journald"], None),
    (["python3", "app.py", "--port", "8080"], None), (["/usr/bin/containerd"], None),
    ([], None), (["nginx: worker process"], None), (["tail", "-f", "/var/log/vllm.log"], None),
]
workloads = [
    ["/venv/bin/python3", "/venv/bin/vllm", "serve", "Qwen/Qwen3-8B", "--gpu-memory-utilization", "0.5"],
    ["VLLM::EngineCore"],
    ["python", "-m", "sglang.launch_server", "--model-path", "m", "--mem-fraction-static=0.6"],
    ["/usr/local/bin/ollama", "serve"], ["/usr/local/bin/ollama", "runner", "--model", "blob", "--ctx-size", "8192"],
    ["/venv/bin/python3", "/venv/bin/trl", "sft", "--model_name_or_path", "Qwen/Qwen2.5-0.5B"],
    ["/usr/bin/python3", "/usr/local/bin/torchrun", "--nproc_per_node=4", "train.py"],
    ["/usr/bin/python3", "-u", "train.py"], ["llama-server", "-m", "x.gguf", "-ngl", "99", "-c", "8192"],
]
for i in range(n):
    pid = 100 + i
    argv = workloads[i % len(workloads)] if i % 20 == 0 else shapes[i % len(shapes)][0]
    d = os.path.join(proc, str(pid))
    os.makedirs(d)
    # Workloads hang off init; one in 20 noise processes is a workload's child (multiprocessing helpers).
    ppid = 100 + i - 1 if i % 20 == 1 else 1
    comm = (os.path.basename(argv[0]) if argv else "kworker/0:1")[:15]
    fields = ["S", str(ppid)] + ["0"] * 17 + [str(1000 + i), "8589934592", "1000"] + ["0"] * 30
    open(os.path.join(d, "stat"), "w").write(f"{pid} ({comm}) " + " ".join(fields) + "\n")
    with open(os.path.join(d, "cmdline"), "wb") as f:
        f.write(b"".join(a.encode() + b"\0" for a in argv))
    open(os.path.join(d, "status"), "w").write(
        f"Name:\t{comm}\nPPid:\t{ppid}\nUid:\t1000\t1000\t1000\t1000\nVmRSS:\t  102400 kB\nVmSwap:\t       0 kB\n")
    open(os.path.join(d, "smaps_rollup"), "w").write("Rss:  102400 kB\nPss:  90000 kB\n")
    with open(os.path.join(d, "environ"), "wb") as f:
        f.write(b"PATH=/usr/bin\0HOME=/home/u\0OLLAMA_KEEP_ALIVE=-1\0PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\0")
PY
echo "fixture tree: $(ls -d "$tree"/proc/[0-9]* | wc -l) processes; live /proc: $(ls -d /proc/[0-9]* | wc -l) processes"
# procs exits 1 when its verdict is "oversubscribed" (the fixture's workloads claim more than the
# pool), so exit codes are not errors here (hyperfine -i).
{ "$bin" --root "$tree" procs --json || true; } | python3 -c 'import json,sys; d=json.load(sys.stdin); print("workloads found in the fixture:", len(d["workloads"]))'
base_fixture=()
[ -n "$base" ] && base_fixture=(-n "baseline build: procs --json (fixture, $n procs)" "$base --root $tree procs --json")
hyperfine -N -i --warmup 3 --runs 30 --export-markdown "${BENCH_MD:-/dev/null}" \
  -n "sparkops procs --json (fixture, $n procs)" "$bin --root $tree procs --json" \
  "${base_fixture[@]}" \
  -n "sparkops procs --json --gpu none (live)" "$bin procs --json --gpu none" \
  -n "ps aux | grep -E ... | grep -v grep (live)" "bash -c \"ps aux | grep -E 'vllm|ollama|trl|axolotl' | grep -v grep; true\"" \
  -n "ps -eo pid,args (live)" "ps -eo pid,args"

# The same tree size live: N sleepers beside what runs here, read by sparkops and by ps alike.
for _ in $(seq 1 "$n"); do sleep 3600 & sleepers+=($!); done
echo "live /proc with $n sleepers: $(ls -d /proc/[0-9]* | wc -l) processes"
base_live=()
[ -n "$base" ] && base_live=(-n "baseline build: procs --json --gpu none (live, +$n)" "$base procs --json --gpu none")
hyperfine -N -i --warmup 3 --runs 30 --export-markdown "${BENCH_MD2:-/dev/null}" \
  -n "sparkops procs --json --gpu none (live, +$n)" "$bin procs --json --gpu none" \
  "${base_live[@]}" \
  -n "ps -eo pid,args (live, +$n)" "ps -eo pid,args"
