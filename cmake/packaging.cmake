# Debian package (CPack DEB): the binary, the systemd units, the Grafana dashboard and the
# Prometheus scrape config and rules. `cpack -G DEB` in a build dir makes sparkops_<version>_<arch>.deb, with
# <arch> following the target: amd64 for x86_64, arm64 for aarch64 (DGX OS). Build the arm64 package
# on a Spark, or cross-compile with -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake.
include(GNUInstallDirs)

install(FILES deploy/systemd/sparkops-exporter.service deploy/systemd/sparkops-sample@.service
        DESTINATION lib/systemd/system COMPONENT sparkops)
install(FILES deploy/grafana/sparkops-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/sparkops/grafana COMPONENT sparkops)
install(FILES deploy/prometheus/sparkops-scrape.yml deploy/prometheus/sparkops-rules.yml
              deploy/prometheus/sparkops-two-sparks.yml deploy/prometheus/sparkops-federate.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/sparkops/prometheus COMPONENT sparkops)
install(FILES docs/metrics.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT sparkops)

# `cpack` must not rebuild every test and benchmark first: the package holds only what is installed,
# and its targets are built by the normal build.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(aarch64|arm64|ARM64)$")
  set(SPARKOPS_DEB_ARCH arm64)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(SPARKOPS_DEB_ARCH amd64)
else()
  set(SPARKOPS_DEB_ARCH ${CMAKE_SYSTEM_PROCESSOR})
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sparkops)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "sparkops")
set(CPACK_PACKAGE_CONTACT "sparkops maintainers <maintainers@sparkops.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "memory, thermal and workload truth for unified-memory GPU machines (DGX Spark / GB10)")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${SPARKOPS_DEB_ARCH})
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "sparkops answers, for a machine whose CPU and GPU share one memory pool, whether a job fits,\n what to do after an OOM, why training slowed down and what else is eating the pool.\n It includes a Prometheus exporter (sparkops serve) with systemd units and a Grafana dashboard.")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, prometheus-node-exporter")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/deploy/debian/postinst ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
    ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# Runtime library dependencies from dpkg-shlibdeps (libc6; for the HTTP module libcpp-httplib,
# libssl, ...; {fmt}, toml++, ncurses and libstdc++ are linked into the binary). It needs the
# target's libraries installed, which a cross build to arm64 may not have: there, pass
# -DSPARKOPS_DEB_DEPENDS="libc6, libstdc++6, libcpp-httplib0.11, ..." instead.
set(SPARKOPS_DEB_DEPENDS "" CACHE STRING "Depends: line for the .deb; empty = computed by dpkg-shlibdeps")
if(SPARKOPS_DEB_DEPENDS)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS ${SPARKOPS_DEB_DEPENDS})
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
include(CPack)
