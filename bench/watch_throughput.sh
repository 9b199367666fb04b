#!/bin/sh
# Throughput of `sparkops watch`: 100 MB of line-structured output (random bytes, a newline every
# ~64) pushed through watch (terminal side to /dev/null, log + .times sidecar + live parse to disk)
# against plain `cat` and `cat | tee`. Usage: bench/watch_throughput.sh [path/to/sparkops]
set -eu
SPARKOPS=${1:-build/release/src/cli/sparkops}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
head -c 100000000 /dev/urandom | tr '\000-\003' '\n\n\n\n' > "$WORK/big.txt"
cd "$WORK"
hyperfine --warmup 1 --runs 5 \
  "cat big.txt > /dev/null" \
  "cat big.txt | tee tee.log > /dev/null" \
  "$SPARKOPS --root / watch --no-preflight --gpu none --interval 1 --dir run -- cat big.txt > /dev/null; rm -rf run"
