# `make deb` (cpack -G DEB): one binary package. Runtime libraries come from
# dpkg-shlibdeps when it is there (dpkg-dev), else from the floor versions
# CMake checked. Mechanisms are optional: the tool reports a missing one as
# "blocked" with the reason, so bubblewrap is a Recommends and the gVisor
# pieces (docker.io, runsc) are Suggests.
#
# Lintian-clean (tests/cli/install.sh runs lintian: 0 errors, 0 warnings):
# a DEP-5 copyright file, a Debian-format changelog, the man page and the
# changelog gzipped (-9n: reproducible), binaries stripped by CPack
# (CPACK_STRIP_FILES; the unstripped ones stay in the build tree for
# debugging), hardening flags from CMakeLists.txt, python3 for the Agently
# adapter script, and one override with its reason (cmake/deb/).

# Gzipped docs, made at build time and installed by every install.
string(TIMESTAMP AGSBX_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)   # honours SOURCE_DATE_EPOCH
configure_file(${CMAKE_SOURCE_DIR}/cmake/deb/changelog.in ${CMAKE_BINARY_DIR}/pkg/changelog @ONLY)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/pkg/agsbx-evidence.1.gz ${CMAKE_BINARY_DIR}/pkg/changelog.gz
  COMMAND gzip -9n -c ${CMAKE_SOURCE_DIR}/docs/agsbx-evidence.1 > ${CMAKE_BINARY_DIR}/pkg/agsbx-evidence.1.gz
  COMMAND gzip -9n -c ${CMAKE_BINARY_DIR}/pkg/changelog > ${CMAKE_BINARY_DIR}/pkg/changelog.gz
  DEPENDS ${CMAKE_SOURCE_DIR}/docs/agsbx-evidence.1 ${CMAKE_BINARY_DIR}/pkg/changelog
  COMMENT "gzip the man page and the Debian changelog")
add_custom_target(agsbx_pkg_docs ALL DEPENDS ${CMAKE_BINARY_DIR}/pkg/agsbx-evidence.1.gz ${CMAKE_BINARY_DIR}/pkg/changelog.gz)
install(FILES ${CMAKE_BINARY_DIR}/pkg/agsbx-evidence.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_BINARY_DIR}/pkg/changelog.gz cmake/deb/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES cmake/deb/lintian-overrides RENAME agsbx-evidence DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME agsbx-evidence)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "agsbx-evidence contributors")
set(CPACK_PACKAGE_CONTACT "agsbx-evidence maintainers <maintainers@agsbx-evidence.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# The body; CPack puts the summary above it as the synopsis.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "agsbx-evidence drives sandbox providers (bubblewrap, Landlock, gVisor through
Docker, a no-isolation control) through real attacks with paired controls:
reading a canary outside the grant, writing outside, escaping through a
symlink, reaching a loopback listener, leaking a process past a timeout.
It writes one signed JSON evidence bundle that maintainers verify, report,
diff and compare; the signature is an OpenSSH SSHSIG that stock ssh-keygen
verifies.")
set(CPACK_STRIP_FILES ON)
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
find_program(AGSBX_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(AGSBX_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  # libcurl is dlopen'd on first use (base/http-curl.h), so dpkg-shlibdeps
  # cannot see it: named here, and CPack appends what it finds.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4 (>= 7.81), python3")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6, libjansson4 (>= 2.13), libcurl4 (>= 7.81), libsodium23 (>= 1.0.18), libssl3 (>= 3.0), python3")
endif()
# python3: the Agently adapter (libexec/agsbx-evidence/agently-adapter.py),
# a script the package ships. git: --subject-repo; openssh-client: signing
# with RSA, ECDSA, agent or encrypted keys.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bubblewrap, git, openssh-client")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "docker.io, runsc")
include(CPack)
