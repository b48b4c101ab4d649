# ptyko_check_kokkos_view(): stop the configuration, with the fix, when the
# Kokkos found builds Views that crash when copied.
#
# Kokkos 4.7 and later build View on mdspan by default (unless configured
# with Kokkos_ENABLE_IMPL_VIEW_LEGACY=ON). GCC 12, Debian bookworm's compiler,
# compiles that View's default constructor without the flag that marks an
# empty View as holding no allocation (kokkos/kokkos#7464; at any -O level):
# copying an empty View then dereferences a null allocation record, and every
# ptyko run and test crashes on its first empty View (measured with a Kokkos
# 4.6.99 develop snapshot and g++ 12.2; Clang 14 on the same install is fine).
# Later Kokkos releases carry fixes for some GCC 12 versions and not others
# (kokkos/kokkos#8223, #9262), so this checks the build rather than a version:
# a program that copies an empty View is built and run with the compiler and
# Kokkos of this configuration. It needs no device (Kokkos is not
# initialised) and is skipped when cross-compiling, when Kokkos has no
# mdspan-based View (before 4.7, or built with the legacy one), or when its
# program does not build or start (a CUDA build on a machine without the
# driver). Its answer is kept until the Kokkos install, its date or the
# compiler change. Ptyko_CHECK_KOKKOS_VIEW=OFF skips it.
function(ptyko_check_kokkos_view)
  option(Ptyko_CHECK_KOKKOS_VIEW "Check at configure time that the Kokkos found copies an empty View without crashing" ON)
  if(NOT Ptyko_CHECK_KOKKOS_VIEW OR CMAKE_CROSSCOMPILING)
    return()
  endif()
  if(Kokkos_VERSION VERSION_LESS 4.6.99 OR NOT Kokkos_ENABLE_IMPL_MDSPAN OR Kokkos_ENABLE_IMPL_VIEW_LEGACY)
    return()
  endif()
  file(TIMESTAMP ${Kokkos_DIR}/KokkosConfig.cmake _installed)
  set(_key "${Kokkos_DIR};${_installed};${CMAKE_CXX_COMPILER}")
  if(DEFINED Ptyko_KOKKOS_VIEW_COPIES AND Ptyko_KOKKOS_VIEW_COPIES_FOR STREQUAL _key)
    set(_copies ${Ptyko_KOKKOS_VIEW_COPIES})
  else()
    set(_dir ${CMAKE_BINARY_DIR}/CMakeFiles/ptyko_check_kokkos_view)
    file(WRITE ${_dir}/copy_empty_view.cpp [=[
#include <Kokkos_Core.hpp>
#include <cstdio>
int main() {
  std::fputs("copying\n", stdout);
  std::fflush(stdout);
  Kokkos::View<float*, Kokkos::HostSpace> empty;
  Kokkos::View<float*, Kokkos::HostSpace> copy = empty;  // crashes where the View is miscompiled
  std::fputs(copy.data() == nullptr ? "copied\n" : "wrong\n", stdout);
  return 0;
}
]=])
    try_run(_run _built ${_dir}/build ${_dir}/copy_empty_view.cpp
            LINK_LIBRARIES Kokkos::kokkos
            CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
            RUN_OUTPUT_VARIABLE _run_output)
    if(NOT _built OR NOT _run_output MATCHES "copying")
      # Not this check's business when the program does not build or start
      # (e.g. a CUDA build on a machine without the driver): the build and
      # the tests will say what is wrong.
      message(STATUS "ptyko: could not build or start the empty-View check against Kokkos ${Kokkos_VERSION}; skipped")
      return()
    endif()
    if(_run_output MATCHES "copied")
      set(_copies ON)
    else()
      set(_copies OFF)
    endif()
    set(Ptyko_KOKKOS_VIEW_COPIES ${_copies} CACHE INTERNAL "The Kokkos found copies an empty View")
    set(Ptyko_KOKKOS_VIEW_COPIES_FOR "${_key}" CACHE INTERNAL "")
  endif()
  if(NOT _copies)
    message(FATAL_ERROR
      "ptyko: Kokkos ${Kokkos_VERSION} (${Kokkos_DIR}) with ${CMAKE_CXX_COMPILER_ID} "
      "${CMAKE_CXX_COMPILER_VERSION} crashes when it copies an empty View (its mdspan-based View, "
      "miscompiled by GCC 12: kokkos/kokkos#7464), so ptyko would crash too. Fix: rebuild Kokkos with "
      "-DKokkos_ENABLE_IMPL_VIEW_LEGACY=ON, or build Kokkos and ptyko with GCC 13 or later or Clang; "
      "-DPtyko_CHECK_KOKKOS_VIEW=OFF skips this check.")
  endif()
endfunction()
