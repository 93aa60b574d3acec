# SPDX-License-Identifier: MIT
# Links the tools with HDF5's static library when it links on its own.
#
# Debian's shared libhdf5 needs libcurl, libcrypto, GnuTLS, Kerberos and
# LDAP (44 libraries in all): scope-writer then spends 8 to 9 ms of every
# profiled process's exit, and scope-run as much before the program starts,
# only loading them. The static library pulls in just the code the tools
# call (not the S3 driver that wants curl): 14 libraries, 3.4 ms.
# SCOPE_STATIC_HDF5=OFF keeps the shared one.

option(SCOPE_STATIC_HDF5 "Link HDF5 statically when it can (faster tool start-up)" ON)
# The fuzzer keeps the shared library: its findings are sorted by the
# module they happen in, and libhdf5's own belong apart from the reader's.
set(SCOPE_HDF5_SHARED_LIBRARIES ${HDF5_C_LIBRARIES})
if(NOT SCOPE_STATIC_HDF5)
  return()
endif()

find_library(SCOPE_HDF5_STATIC NAMES libhdf5_serial.a libhdf5.a
  HINTS ${HDF5_C_LIBRARY_DIRS} ${HDF5_LIBRARY_DIRS})
if(NOT SCOPE_HDF5_STATIC)
  message(STATUS "HDF5: no static library, linking the shared one")
  return()
endif()

set(_static ${SCOPE_HDF5_STATIC})
foreach(_lib IN LISTS HDF5_C_LIBRARIES)
  if(NOT _lib MATCHES "libhdf5[^/]*\\.so$|libcurl|libcrypto")
    list(APPEND _static ${_lib})
  endif()
endforeach()

include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_INCLUDES ${HDF5_INCLUDE_DIRS})
set(CMAKE_REQUIRED_DEFINITIONS ${HDF5_DEFINITIONS})
set(CMAKE_REQUIRED_LIBRARIES ${_static})
check_c_source_compiles("
#include <hdf5.h>
int main(void) { hid_t f = H5Fcreate(\"x.h5\", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t d = H5Pcreate(H5P_DATASET_CREATE); H5Pset_deflate(d, 1); H5Pset_shuffle(d);
  return f < 0 || d < 0; }" SCOPE_HDF5_STATIC_LINKS)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_DEFINITIONS)
unset(CMAKE_REQUIRED_LIBRARIES)
if(SCOPE_HDF5_STATIC_LINKS)
  set(HDF5_C_LIBRARIES ${_static})
  message(STATUS "HDF5: linking ${SCOPE_HDF5_STATIC}")
else()
  message(STATUS "HDF5: the static library does not link alone, linking the shared one")
endif()
