# SPDX-License-Identifier: MIT
# The Debian package: `cpack -G DEB` in the build folder makes scope_VERSION_ARCH.deb of everything installed.
#
# Its dependencies are the Debian packages of the shared libraries the
# programs link, as dpkg-shlibdeps finds them (libdw, libdeflate, zlib, and
# HDF5's: libhdf5 when it is linked shared, the libraries of the static one
# otherwise, see StaticHDF5.cmake), with the Python package's. Without
# dpkg-shlibdeps (dpkg-dev) they are named here.

set(CPACK_PACKAGE_NAME scope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "the scope authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "function-level profiler for native programs")
set(CPACK_PACKAGE_DESCRIPTION "scope records every call of the functions of a program built with
-finstrument-functions, in every thread and process, into one HDF5 profile,
and reports, merges and exports it. The scope_profile Python package reads
profiles into pandas.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "the scope authors")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(scope_python_depends "python3, python3-h5py, python3-numpy, python3-pandas")
find_program(SCOPE_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(SCOPE_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${scope_python_depends}")
else()
  set(scope_hdf5_depends libhdf5-103-1)
  if(SCOPE_HDF5_STATIC AND SCOPE_HDF5_STATIC_LINKS)
    set(scope_hdf5_depends "libsz2, libaec0")
  endif()
  if(SCOPE_OTF2_INCLUDE AND SCOPE_OTF2_LIBRARY) # scope-report --otf2
    string(APPEND scope_hdf5_depends ", libopen-trace-format2-10")
  endif()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6, libdw1, libelf1, libdeflate0, zlib1g, ${scope_hdf5_depends}, ${scope_python_depends}")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-matplotlib, bash-completion")

include(CPack)
