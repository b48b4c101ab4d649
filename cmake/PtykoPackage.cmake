# Installs and exports the ptyko libraries as a CMake package:
#
#   find_package(ptyko 0.1 REQUIRED)
#   target_link_libraries(app PRIVATE ptyko::ptyko)   # or ptyko::{kernels,core,parallel}
#
# Installed under ${CMAKE_INSTALL_LIBDIR}/cmake/ptyko:
#   ptykoConfig.cmake          re-finds the dependencies, then loads the targets
#   ptykoConfigVersion.cmake   SameMajorVersion
#   ptykoTargets*.cmake        ptyko::kernels, ptyko::core, ptyko::parallel, ptyko::ptyko
#   PtykoDependencies.cmake, PtykoFindKokkos.cmake, FindFFTW3.cmake
#                              the same dependency search as this build; it
#                              makes the imported targets (ptyko_deps::*,
#                              FFTW3::*, Kokkos::kokkos, ...) that the exported
#                              link interfaces name, since imported targets
#                              are not exported.
# The same package is also written into the build tree
# (${PROJECT_BINARY_DIR}/ptyko-config), so that a project can use a build
# without installing it: -Dptyko_DIR=<build>/ptyko-config.

include(CMakePackageConfigHelpers)

# ptyko::ptyko: everything. The target is called ptyko_all here because the
# driver executable is already called ptyko.
add_library(ptyko_all INTERFACE)
add_library(ptyko::ptyko ALIAS ptyko_all)
set_target_properties(ptyko_all PROPERTIES EXPORT_NAME ptyko)
target_link_libraries(ptyko_all INTERFACE ptyko_kernels ptyko_core ptyko_parallel)

set(Ptyko_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/ptyko
  CACHE STRING "Where ptykoConfig.cmake is installed, relative to the prefix")
mark_as_advanced(Ptyko_INSTALL_CMAKEDIR)

install(TARGETS ptyko_kernels ptyko_core ptyko_parallel ptyko_all
  EXPORT ptykoTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ptykoTargets
  NAMESPACE ptyko::
  DESTINATION ${Ptyko_INSTALL_CMAKEDIR})

# Where this build found Kokkos: ptykoConfig.cmake looks
# there first unless the user points elsewhere (Kokkos_ROOT, Kokkos_DIR).
set(PTYKO_KOKKOS_DIR "${Kokkos_DIR}")

set(_ptyko_dep_files
  ${PROJECT_SOURCE_DIR}/cmake/PtykoDependencies.cmake
  ${PROJECT_SOURCE_DIR}/cmake/PtykoFindKokkos.cmake
  ${PROJECT_SOURCE_DIR}/cmake/FindFFTW3.cmake)

# Install tree.
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/ptykoConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/install/ptykoConfig.cmake
  INSTALL_DESTINATION ${Ptyko_INSTALL_CMAKEDIR}
  NO_SET_AND_CHECK_MACRO)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/ptyko-config/ptykoConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/install/ptykoConfig.cmake
  ${PROJECT_BINARY_DIR}/ptyko-config/ptykoConfigVersion.cmake
  ${_ptyko_dep_files}
  DESTINATION ${Ptyko_INSTALL_CMAKEDIR})

# Build tree: the same files in ${PROJECT_BINARY_DIR}/ptyko-config.
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/ptykoConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ptyko-config/ptykoConfig.cmake
  INSTALL_DESTINATION ${PROJECT_BINARY_DIR}/ptyko-config
  INSTALL_PREFIX ${PROJECT_BINARY_DIR}
  NO_SET_AND_CHECK_MACRO)
export(EXPORT ptykoTargets
  NAMESPACE ptyko::
  FILE ${PROJECT_BINARY_DIR}/ptyko-config/ptykoTargets.cmake)
foreach(_f IN LISTS _ptyko_dep_files)
  configure_file(${_f} ${PROJECT_BINARY_DIR}/ptyko-config/ COPYONLY)
endforeach()
