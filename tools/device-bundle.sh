#!/usr/bin/env bash
# Packs a release sparkops and the GPU probe with every shared library they load (glibc and its
# loader included) into .device/, so they run on an x86_64 GPU machine that has no -dev packages
# and maybe an older glibc. .device/ is git-ignored; carry it with the device tool.
#   tools/device-bundle.sh [BUILD_DIR]      (default build/release, built if missing)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
[[ -x $build/src/cli/sparkops ]] || { cmake --preset release >/dev/null; cmake --build "$build" --target sparkops; }
rm -rf .device && mkdir -p .device/bin .device/lib
cp "$build/src/cli/sparkops" .device/bin/
# The GPU probe prints every figure the NVML source reads, and which are absent.
mkdir -p .device/obj
g++ -std=c++20 -O2 -Isrc -I"$build/src/base/generated" tests/gpu/probe/gpu_probe.cpp \
  "$build/src/gpu/libsparkops_gpu.a" "$build/src/base/libsparkops_base.a" -lfmt -ldl -o .device/bin/gpu_probe
rm -rf .device/obj
for exe in .device/bin/*; do
  ldd "$exe" | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | while read -r lib; do
    cp -L -n "$lib" .device/lib/ 2>/dev/null || true
  done
done
# Each wrapper runs its program through the carried loader, so the carried glibc is used; the
# machine's own library path stays searchable for dlopen("libnvidia-ml.so.1").
for exe in .device/bin/*; do
  name=$(basename "$exe")
  cat > ".device/$name" <<WRAP
#!/bin/sh
here=\$(cd "\$(dirname "\$0")" && pwd)
nv=\$(ldconfig -p 2>/dev/null | awk '/libnvidia-ml.so.1/ {print \$NF; exit}')
extra=\${nv:+:\$(dirname "\$nv")}
exec "\$here/lib/ld-linux-x86-64.so.2" --library-path "\$here/lib:\${LD_LIBRARY_PATH:-/usr/lib/x86_64-linux-gnu}\$extra:/usr/local/nvidia/lib64:/usr/lib64" "\$here/bin/$name" "\$@"
WRAP
  chmod +x ".device/$name"
done
du -sh .device
