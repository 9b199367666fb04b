#!/usr/bin/env bash
# Memory of the commands that never go online, and which TLS/HTTP libraries they map, against
# `free` and `ps aux` in the same run (docs/benchmarks.md "## start-up and memory").
#   bench/offline_rss.sh [BUILD_DIR] [BASE_BUILD_DIR]
# Peak RSS is GNU time's %M (the kernel's maxrss of the process). Mapped libraries:
#   - long-running commands (sample, serve): `grep -c` of the libraries in /proc/PID/maps while
#     the process runs;
#   - commands that finish at once: LD_DEBUG=files, the dynamic loader's own list of every object
#     it maps, dlopen()ed ones included (the same set /proc/PID/maps would show).
# With BASE_BUILD_DIR the same rows are run for that build too (the figure before a change).
# Exit status 1 when an offline command of BUILD_DIR maps libcrypto, libssl or cpp-httplib.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
builds=("${1:-$repo/build/release}")
[[ -n ${2:-} ]] && builds+=("$2")
root=$repo/tests/fixtures/roots/gb10-finetune
log=$repo/tests/fixtures/logs/hf_trainer_qlora_qwen3-8b_rtx5000ada_nohup.log
tls='libcrypto|libssl|libcpp-httplib'
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
export HOME=$work XDG_CONFIG_HOME=$work/config  # no user config file changes what runs

peak_kib() { /usr/bin/time -f %M -o "$work/t" "$@" >/dev/null 2>&1 || true; cat "$work/t" | tail -1; }
loaded_tls() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -E "file=($tls)" | grep -c 'generating link map' || true; }
mib() { awk -v k="$1" 'BEGIN{printf "%.1f", k/1024}'; }

status=0
for build in "${builds[@]}"; do
  bin=$build/src/cli/sparkops
  [[ -x $bin ]] || { echo "no sparkops binary at $bin" >&2; exit 2; }
  echo "### $bin"
  echo "| command | peak RSS MiB | TLS/HTTP libraries mapped |"
  echo "|---|---|---|"
  offline=(
    "status --json --gpu none"
    "--root $root status --json"
    "procs --json --gpu none"
    "plan Llama-3.1-8B --method lora --json"
    "analyze --log $log --json"
    "config --json"
    "--version"
  )
  for args in "${offline[@]}"; do
    read -ra a <<<"$args"
    k=$(peak_kib "$bin" "${a[@]}")
    n=$(loaded_tls "$bin" "${a[@]}")
    [[ $build == "${builds[0]}" && $n != 0 ]] && status=1
    echo "| \`sparkops ${args//$repo\//}\` | $(mib "$k") | $n |"
  done
  # sample runs until stopped: maps are read from the live process.
  "$bin" --root "$root" sample --interval 1 --gpu none --out "$work/thermal.log" >/dev/null 2>&1 &
  pids+=($!); p=$!
  sleep 1.5
  n=$(grep -cE "$tls" "/proc/$p/maps" || true)
  hwm=$(awk '/^VmHWM/{print $2}' "/proc/$p/status")
  kill "$p"; wait "$p" 2>/dev/null || true
  [[ $build == "${builds[0]}" && $n != 0 ]] && status=1
  echo "| \`sparkops sample --interval 1 --gpu none\` (running, /proc/PID/maps) | $(mib "$hwm") | $n maps lines |"
  # serve over HTTP is the one command that needs them (loaded with the HTTP module).
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$bin" --root "$root" serve --listen "127.0.0.1:$port" --gpu none >/dev/null 2>&1 &
  pids+=($!); p=$!
  for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$port/metrics" >/dev/null && break; sleep 0.1; done
  n=$(grep -cE "$tls" "/proc/$p/maps" || true)
  hwm=$(awk '/^VmHWM/{print $2}' "/proc/$p/status")
  kill "$p"; wait "$p" 2>/dev/null || true
  echo "| \`sparkops serve\` (running, /proc/PID/maps; needs them) | $(mib "$hwm") | $n maps lines |"
done
echo "### baselines"
echo "| command | peak RSS MiB |"
echo "|---|---|"
echo "| \`free -g\` | $(mib "$(peak_kib free -g)") |"
echo "| \`ps aux\` | $(mib "$(peak_kib ps aux)") |"
exit $status
