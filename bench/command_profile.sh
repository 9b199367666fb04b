#!/usr/bin/env bash
# Where one whole sparkops command spends its instructions and system calls, for the rows of
# docs/benchmarks.md whose target is not met: callgrind over the whole process (the dynamic
# loader's relocations and symbol lookups, static initialisers and the command itself are all
# counted; instruction counts do not move with the load of a shared machine), the heaviest
# objects and functions by self and inclusive cost, the system calls by count (strace -c) and
# the loader's own statistics (LD_DEBUG=statistics).
#   bench/command_profile.sh SPARKOPS_BINARY ARGS...
# e.g. bench/command_profile.sh build/release/src/cli/sparkops status --json
# Needs valgrind and strace.
set -u
bin=$1
shift
command -v valgrind >/dev/null || { echo "apt-get install valgrind" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$bin" "$@" >/dev/null 2>"$work/cg.err" || true
echo "instructions: $(awk '/Collected :/{print $NF}' "$work/cg.err")"
echo "by object (self):"
callgrind_annotate --threshold=100 "$work/cg.out" 2>/dev/null |
  awk '/file:function/{go=1; next} go && NF' |
  sed -nE 's/^ *([0-9,]+) +\( *[0-9.]+%\).*\[([^]]*)\]$/\2 \1/p' |
  awk '{gsub(",", "", $2); s[$1] += $2} END {for (o in s) printf "  %12d %s\n", s[o], o}' |
  sort -rn | head -8
echo "heaviest functions (self):"
callgrind_annotate "$work/cg.out" 2>/dev/null | awk '/file:function/{go=1; next} go && NF' |
  grep -v '^-' | head -15 | sed -E 's/ \[[^]]*\]$//; s/^( *[0-9,]+ +\( *[0-9.]+%\)) +([^ ]*\.(h|hpp|c|cc|cpp|tcc|S)|\?\?\?):/\1 /' |
  cut -c1-140 | sed 's/^/  /'
echo "heaviest functions (inclusive):"
callgrind_annotate --inclusive=yes "$work/cg.out" 2>/dev/null | awk '/file:function/{go=1; next} go && NF' |
  grep -v '^-' | head -20 | sed -E 's/ \[[^]]*\]$//; s/^( *[0-9,]+ +\( *[0-9.]+%\)) +([^ ]*\.(h|hpp|c|cc|cpp|tcc|S)|\?\?\?):/\1 /' |
  cut -c1-140 | sed 's/^/  /'
if command -v strace >/dev/null; then
  echo "system calls (strace -c -f):"
  strace -f -c -o "$work/st" "$bin" "$@" >/dev/null 2>&1 || true
  awk '$1 ~ /^[0-9.]+$/ && $NF != "total" {print "  " $NF " " $4}' "$work/st" | sort -k2 -rn | head -8
  awk '$NF == "total" {print "  total " $4}' "$work/st"
fi
echo "dynamic loader (LD_DEBUG=statistics):"
LD_DEBUG=statistics "$bin" "$@" 2>&1 >/dev/null | grep -E 'total startup time|relocations|objects' |
  sed -E 's/^ *[0-9]+: *//; s/^/  /'
