#!/usr/bin/env bash
# Runs the system Python (Debian's python3-torch lives there, not in a pyenv/venv python) with
# tools/memtrace on the path. Exit 77 (ctest's skip code) when torch is not importable.
set -euo pipefail
py=/usr/bin/python3
[[ -x "$py" ]] || py="$(command -v python3)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
if ! "$py" -c "import torch" >/dev/null 2>&1; then
  echo "SKIP: $py cannot import torch (install python3-torch: tools/install-deps.sh --test)" >&2
  exit 77
fi
exec "$py" "$@"
