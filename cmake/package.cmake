# `make deb` (cpack -G DEB): one binary package. Runtime libraries come from
# dpkg-shlibdeps when it is there (dpkg-dev), else from the floor versions
# CMake checked. Mechanisms are optional: the tool reports a missing one as
# "blocked" with the reason, so bubblewrap is a Recommends and the gVisor
# pieces (docker.io, runsc) are Suggests.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME agsbx-evidence)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "agsbx-evidence contributors")
set(CPACK_PACKAGE_CONTACT "agsbx-evidence maintainers <maintainers@agsbx-evidence.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
find_program(AGSBX_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(AGSBX_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  # libcurl is dlopen'd on first use (base/http-curl.h), so dpkg-shlibdeps
  # cannot see it: named here, and CPack appends what it finds.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4 (>= 7.81)")
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6, libjansson4 (>= 2.13), libcurl4 (>= 7.81), libsodium23 (>= 1.0.18), libssl3 (>= 3.0)")
endif()
# git: --subject-repo; openssh-client: signing with RSA, ECDSA, agent or
# encrypted keys.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bubblewrap, git, openssh-client")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "docker.io, runsc")
include(CPack)
