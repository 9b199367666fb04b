#!/usr/bin/env bash
# Builds the .deb with cpack from the build dir, checks its contents and architecture, then — only
# as root with CI=true or SPARKOPS_ALLOW_DPKG=1, and only when no sparkops package is installed
# already — installs it with dpkg -i, runs the installed `sparkops status`, verifies the installed
# units with systemd-analyze, and purges it again. Exit 77 = skipped (ctest SKIP_RETURN_CODE).
set -euo pipefail
build_dir=${1:?usage: deb_package_test.sh BUILD_DIR}
work=$(mktemp -d)
installed=0
cleanup() {
  if [[ $installed == 1 ]]; then dpkg --purge sparkops >/dev/null || echo "deb_package_test: dpkg --purge failed" >&2; fi
  rm -rf "$work"
}
trap cleanup EXIT

(cd "$build_dir" && cpack -G DEB -B "$work" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/sparkops_*_amd64.deb 2>/dev/null | head -1 || true)
[[ -n $deb ]] || { echo "no amd64 .deb produced"; ls -la "$work"; exit 1; }

[[ $(dpkg-deb -f "$deb" Architecture) == amd64 ]] || { echo "wrong architecture"; exit 1; }
[[ $(dpkg-deb -f "$deb" Package) == sparkops ]] || { echo "wrong package name"; exit 1; }
contents=$(dpkg-deb -c "$deb")
for path in ./usr/bin/sparkops ./usr/lib/sparkops/sparkops-http.so \
  ./usr/lib/systemd/system/sparkops-exporter.service \
  ./usr/lib/systemd/system/sparkops-sample@.service ./usr/share/sparkops/grafana/sparkops-dashboard.json \
  ./usr/share/sparkops/prometheus/sparkops-scrape.yml ./usr/share/sparkops/prometheus/sparkops-rules.yml \
  ./usr/share/man/man1/sparkops.1 ./usr/share/bash-completion/completions/sparkops \
  ./usr/share/zsh/vendor-completions/_sparkops ./usr/share/fish/vendor_completions.d/sparkops.fish; do
  grep -q " $path\$" <<<"$contents" || { echo "missing $path in $deb"; echo "$contents"; exit 1; }
done
depends=$(dpkg-deb -f "$deb" Depends)
# dpkg-shlibdeps ran: the binary needs libc6, the HTTP module its TLS and HTTP libraries.
grep -q "libc6" <<<"$depends" && grep -q "libssl" <<<"$depends" || { echo "Depends lacks libc6 or libssl: $depends"; exit 1; }
echo "deb_package_test: $(basename "$deb") built; Depends: $depends"

if [[ $(id -u) -ne 0 || ( "${CI:-}" != "true" && "${SPARKOPS_ALLOW_DPKG:-}" != "1" ) ]]; then
  echo "deb_package_test: SKIP install (needs root and CI=true or SPARKOPS_ALLOW_DPKG=1)"
  exit 77
fi
if dpkg-query -W -f='${Status}' sparkops 2>/dev/null | grep -q "install ok installed"; then
  echo "deb_package_test: SKIP install (a sparkops package is already installed; not touching it)"
  exit 77
fi

dpkg -i "$deb"
installed=1
fixture_root=${SPARKOPS_FIXTURE_ROOT:-$(cd "$(dirname "$0")/../fixtures/roots/gb10-idle" && pwd)}
out=$(/usr/bin/sparkops --root "$fixture_root" status --gpu none)
grep -q "^POOL" <<<"$out" || { echo "sparkops status printed no pool:"; echo "$out"; exit 1; }
/usr/bin/sparkops --version
# serve loads its HTTP front from /usr/lib/sparkops before it reads the web config, so a missing
# config file must be the error, not a missing module.
serve_err=$(/usr/bin/sparkops --root "$fixture_root" serve --web.config.file "$work/absent.yml" 2>&1 || true)
if grep -q "HTTP module" <<<"$serve_err" || ! grep -q "absent.yml" <<<"$serve_err"; then
  echo "installed serve did not load its HTTP module:"; echo "$serve_err"; exit 1
fi
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify /usr/lib/systemd/system/sparkops-exporter.service \
    /usr/lib/systemd/system/sparkops-sample@test.service
fi
echo "deb_package_test: installed, ran sparkops status, removed"
