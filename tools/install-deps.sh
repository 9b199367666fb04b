#!/usr/bin/env bash
# Installs what sparkops needs to build (and, with --test, to run its whole test suite) from Debian's
# packages and npm. Safe to re-run: installs only what is missing. Works as root or through sudo.
set -euo pipefail

build_pkgs=(cmake ninja-build g++ pkg-config libcli11-dev libfmt-dev nlohmann-json3-dev
  libtomlplusplus-dev libexpected-dev libcpp-httplib-dev libyaml-cpp-dev libssl-dev libcrypt-dev
  libncurses-dev libcurl4-openssl-dev)
test_pkgs=(libgtest-dev libgmock-dev libbenchmark-dev chromium prometheus clang-14 libclang-rt-14-dev
  python3-torch openssl tmux zsh fish)
# npm is needed at build time: the HTML report inlines uPlot from node_modules (see package.json).
# A machine that already has node and npm (from any source) keeps them.
if ! command -v npm >/dev/null 2>&1; then build_pkgs+=(nodejs npm); fi

want=("${build_pkgs[@]}")
if [[ "${1:-}" == "--test" ]]; then
  want+=("${test_pkgs[@]}")
fi

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  as_root=()
  if [[ $(id -u) -ne 0 ]]; then as_root=(sudo); fi
  echo "install-deps: installing ${missing[*]}" >&2
  "${as_root[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# uPlot for the HTML report, pinned by package-lock.json; the build embeds node_modules/uplot/dist.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ ! -f "$repo_root/node_modules/uplot/dist/uPlot.iife.min.js" ]]; then
  echo "install-deps: npm ci (uplot)" >&2
  (cd "$repo_root" && npm ci --no-audit --no-fund >/dev/null)
fi
