# ptyko_find_kokkos(): find Kokkos and Kokkos Kernels and give both usable
# targets: Kokkos::kokkos and ptyko_deps::kokkoskernels.
#
# Debian's Trilinos build (Kokkos 3.4.1) has two quirks handled here:
#  * Kokkos::kokkos carries INTERFACE_INCLUDE_DIRECTORIES "/usr/lib/include",
#    a folder that does not exist; we reset it to ${Kokkos_INCLUDE_DIRS}.
#  * KokkosKernels has no namespaced target and no version file; its
#    variables KokkosKernels_LIBRARIES / _INCLUDE_DIRS are wrapped in an
#    INTERFACE target of ours.
# Upstream Kokkos 4.x installs export Kokkos::kokkos and Kokkos::kokkoskernels.
macro(ptyko_find_kokkos)
  find_package(Kokkos REQUIRED)
  if(NOT TARGET Kokkos::kokkos)
    message(FATAL_ERROR "ptyko: find_package(Kokkos) gave no Kokkos::kokkos target")
  endif()
  get_target_property(_ptyko_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  set(_ptyko_fixed_inc "")
  foreach(_dir IN LISTS _ptyko_kokkos_inc)
    if(_dir MATCHES "^\\$<" OR EXISTS "${_dir}")
      list(APPEND _ptyko_fixed_inc "${_dir}")
    endif()
  endforeach()
  if(NOT _ptyko_fixed_inc AND Kokkos_INCLUDE_DIRS)
    get_filename_component(_ptyko_kinc "${Kokkos_INCLUDE_DIRS}" ABSOLUTE)
    set(_ptyko_fixed_inc "${_ptyko_kinc}")
  endif()
  if(_ptyko_fixed_inc)
    set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_ptyko_fixed_inc}")
  endif()

  # Kokkos_ENABLE_<BACKEND> as variables, also for 3.4's TriBITS config which
  # does not define kokkos_check(); read them off the generated config header.
  foreach(_backend CUDA HIP OPENMP SERIAL THREADS SYCL)
    if(NOT DEFINED Kokkos_ENABLE_${_backend})
      set(Kokkos_ENABLE_${_backend} OFF)
      foreach(_dir IN LISTS _ptyko_fixed_inc)
        if(EXISTS "${_dir}/KokkosCore_config.h")
          file(STRINGS "${_dir}/KokkosCore_config.h" _line REGEX "^#define KOKKOS_ENABLE_${_backend}$")
          if(_line)
            set(Kokkos_ENABLE_${_backend} ON)
          endif()
        endif()
      endforeach()
    endif()
  endforeach()

  find_package(KokkosKernels REQUIRED)
  # An imported target, so that ptykoConfig.cmake can make it again for users
  # by running this same macro (imported targets are not exported).
  if(NOT TARGET ptyko_deps::kokkoskernels)
    add_library(ptyko_deps::kokkoskernels INTERFACE IMPORTED GLOBAL)
    if(TARGET Kokkos::kokkoskernels)
      target_link_libraries(ptyko_deps::kokkoskernels INTERFACE Kokkos::kokkoskernels)
    else()
      get_filename_component(_ptyko_kkinc "${KokkosKernels_INCLUDE_DIRS}" ABSOLUTE)
      set(_ptyko_kklibs "")
      foreach(_lib IN LISTS KokkosKernels_LIBRARIES)
        find_library(_ptyko_lib_${_lib} NAMES ${_lib} HINTS ${KokkosKernels_LIBRARY_DIRS} REQUIRED)
        list(APPEND _ptyko_kklibs ${_ptyko_lib_${_lib}})
      endforeach()
      target_include_directories(ptyko_deps::kokkoskernels SYSTEM INTERFACE ${_ptyko_kkinc})
      target_link_libraries(ptyko_deps::kokkoskernels INTERFACE ${_ptyko_kklibs} Kokkos::kokkos)
    endif()
  endif()
  message(STATUS "ptyko: Kokkos ${Kokkos_VERSION} (CUDA=${Kokkos_ENABLE_CUDA} HIP=${Kokkos_ENABLE_HIP} "
                 "OpenMP=${Kokkos_ENABLE_OPENMP} Serial=${Kokkos_ENABLE_SERIAL})")
endmacro()
