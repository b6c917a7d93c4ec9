# Installing runledger, and its Debian package:
#   cmake --build build --target package   ->  build/runledger_<version>_amd64.deb
# The package holds both binaries and the keeper program (stripped), the
# runledgerd.service systemd unit, /etc/default/runledgerd (a conffile), the
# man pages and the maintainer scripts that create the service's system user.
# The sources of all but the binaries are in packaging/; docs/operations.md says how to use
# them. The package and monitoring checks are in tests/packaging/.

set(RL_PKG_DIR ${CMAKE_SOURCE_DIR}/packaging)
set(RL_PKG_OUT ${CMAKE_BINARY_DIR}/packaging)

# ---- man pages: written in roff, gzipped without a timestamp (-n) ----
set(RL_MAN_PAGES runledgerd.8 runledger.1)
set(RL_MAN_GZ)
foreach(page ${RL_MAN_PAGES})
  # The version in the page's footer comes from project().
  set(RUNLEDGER_VERSION ${PROJECT_VERSION})
  configure_file(${RL_PKG_DIR}/man/${page} ${RL_PKG_OUT}/man/${page} @ONLY)
  add_custom_command(
    OUTPUT ${RL_PKG_OUT}/man/${page}.gz
    COMMAND gzip -9 -n -c ${RL_PKG_OUT}/man/${page} > ${RL_PKG_OUT}/man/${page}.gz
    DEPENDS ${RL_PKG_OUT}/man/${page}
    COMMENT "gzip: ${page}")
  list(APPEND RL_MAN_GZ ${RL_PKG_OUT}/man/${page}.gz)
endforeach()
# Part of ALL, so that `package` (which builds ALL first) finds them.
add_custom_target(runledger_man ALL DEPENDS ${RL_MAN_GZ})

# The changelog a Debian package carries, in Debian's format: it points at
# CHANGELOG.md, which is the project's own. Its date is the day of the
# configure (SOURCE_DATE_EPOCH fixes it); file(CONFIGURE) rewrites it only
# when it changes, so a reconfigure does not rebuild the package's files.
string(TIMESTAMP RL_PKG_DATE "%a, %d %b %Y 00:00:00 +0000" UTC)
file(CONFIGURE OUTPUT ${RL_PKG_OUT}/changelog CONTENT
     "runledger (${PROJECT_VERSION}) unstable; urgency=medium

  * Release ${PROJECT_VERSION}; the changes are in CHANGELOG.md in the
    source tree.

 -- runledger maintainers <maintainers@runledger.invalid>  ${RL_PKG_DATE}
")
add_custom_command(
  OUTPUT ${RL_PKG_OUT}/changelog.gz
  COMMAND gzip -9 -n -c ${RL_PKG_OUT}/changelog > ${RL_PKG_OUT}/changelog.gz
  DEPENDS ${RL_PKG_OUT}/changelog)
add_custom_target(runledger_pkg_changelog ALL DEPENDS ${RL_PKG_OUT}/changelog.gz)

# The copyright file Debian requires: the Apache-2.0 licence is in
# /usr/share/common-licenses.
file(CONFIGURE OUTPUT ${RL_PKG_OUT}/copyright CONTENT
     "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: runledger

Files: *
Copyright: 2026 runledger maintainers
License: Apache-2.0
 On Debian systems, the full text of the Apache License, Version 2.0, is in
 /usr/share/common-licenses/Apache-2.0.
")

# ---- install rules ----
# Paths outside the prefix (/etc, /lib/systemd) are absolute: the package
# installs to /usr, and those files belong where systemd and Debian look.
install(TARGETS runledgerd runledger RUNTIME DESTINATION bin)
# Started by `runledger work` only, never by hand: beside the package's
# other private programs rather than on PATH (worker/keeper.h).
install(TARGETS runledger-keeper RUNTIME DESTINATION lib/runledger)
install(FILES ${RL_PKG_DIR}/systemd/runledgerd.service DESTINATION /lib/systemd/system)
install(FILES ${RL_PKG_DIR}/debian/runledgerd.default DESTINATION /etc/default
        RENAME runledgerd)
install(FILES ${RL_PKG_OUT}/man/runledgerd.8.gz DESTINATION share/man/man8)
install(FILES ${RL_PKG_OUT}/man/runledger.1.gz DESTINATION share/man/man1)
install(FILES ${RL_PKG_OUT}/copyright ${RL_PKG_OUT}/changelog.gz
        DESTINATION share/doc/runledger)

# ---- CPack: one Debian package ----
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME runledger)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "runledger maintainers <maintainers@runledger.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "event-sourced state engine for data jobs")
set(CPACK_PACKAGE_DESCRIPTION "\
runledger records every change to a data job, a data connector or a hold as
an immutable, hash-chained event in an embedded RocksDB log, fsynced before
anyone is told. The server runledgerd serves the state over HTTP, and the CLI
runledger replays, verifies and tells the story of the log. This package runs
runledgerd as the systemd service runledgerd.service.")
# Stage the absolute paths (/etc, /lib) inside the package, not on this
# machine; the prefix of the others is /usr, whatever CMAKE_INSTALL_PREFIX is.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# gzip, not xz: 2.5 MB more, but five times faster to build, and the
# package test builds it on every ctest run.
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
set(CPACK_DEBIAN_PACKAGE_SECTION misc)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# The shared libraries' packages come from dpkg-shlibdeps; the maintainer
# scripts need adduser.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${RL_PKG_DIR}/debian/conffiles ${RL_PKG_DIR}/debian/postinst
    ${RL_PKG_DIR}/debian/prerm ${RL_PKG_DIR}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

# ---- the package and monitoring checks (ctest -L packaging, -L monitoring) ----
# They need no test framework, so they are there whatever RUNLEDGER_TESTS says.
enable_testing()
add_subdirectory(${CMAKE_SOURCE_DIR}/tests/packaging ${CMAKE_BINARY_DIR}/tests/packaging)
