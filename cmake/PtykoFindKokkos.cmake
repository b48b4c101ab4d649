# ptyko_find_kokkos(): find Kokkos and make Kokkos::kokkos usable.
#
# Debian's Trilinos build (Kokkos 3.4.1) carries INTERFACE_INCLUDE_DIRECTORIES
# "/usr/lib/include" on Kokkos::kokkos, a folder that does not exist; we reset
# it to ${Kokkos_INCLUDE_DIRS}. Upstream Kokkos 4.x installs need nothing.
#
# ptyko needs Kokkos core only. Kokkos Kernels is not searched for: its one use
# (KokkosBlas gemm for the probe modes' Gram matrix) was replaced in 9907103 by
# reductions that were faster on every backend we measured, and requiring it
# cost users with their own Kokkos 4 an extra build.
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

  message(STATUS "ptyko: Kokkos ${Kokkos_VERSION} (CUDA=${Kokkos_ENABLE_CUDA} HIP=${Kokkos_ENABLE_HIP} "
                 "OpenMP=${Kokkos_ENABLE_OPENMP} Threads=${Kokkos_ENABLE_THREADS} Serial=${Kokkos_ENABLE_SERIAL})")
endmacro()
