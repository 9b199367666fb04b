#!/usr/bin/env bash
# Instructions of `sparkops analyze` on the HF/tqdm benchmark log (bench/hf_tqdm_log.py), counted
# by callgrind: a figure that does not move with the load of a shared machine, so two builds
# compare in one run even when their times would not. Prints instructions per input byte and the
# hottest functions (self cost) of each binary, and the CPU time of `wc -l` on the same file.
#   bench/analyze_profile.sh [SPARKOPS_BINARY] [SIZE_MB] [BASELINE_SPARKOPS_BINARY]
# Needs valgrind. SIZE_MB defaults to 4 (callgrind runs ~50x slower than native).
set -euo pipefail
bin="${1:-build/release/src/cli/sparkops}"
size_mb="${2:-4}"
base="${3:-}"
command -v valgrind >/dev/null || { echo "apt-get install valgrind" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="$work/train.log"
"$(dirname "$0")/hf_tqdm_log.py" "$log" "$size_mb"
bytes=$(stat -c %s "$log")
echo "log: $bytes bytes"
profile() {  # name binary
  valgrind --tool=callgrind --callgrind-out-file="$work/$1.out" \
    "$2" analyze --log "$log" --json --start 2025-11-09T00:00:00Z >/dev/null 2>"$work/$1.err"
  local ir
  ir=$(awk '/Collected :/{print $NF}' "$work/$1.err")
  printf '%s: %s instructions, %.1f per byte\n' "$1" "$ir" "$(echo "$ir / $bytes" | bc -l)"
  callgrind_annotate "$work/$1.out" 2>/dev/null | awk '/file:function/{go=1; next} go && NF' |
    head -12 | sed -E 's/\(std::.*//; s/ \[.*//' || true
}
profile after "$bin"
[[ -n $base ]] && profile before "$base"
/usr/bin/time -f "wc -l: %U s user + %S s sys" wc -l "$log" >/dev/null
