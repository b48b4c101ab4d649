# FindFFTW3
# ---------
# Finds FFTW3 (https://www.fftw.org) in its single and double precision builds.
#
#   find_package(FFTW3 [REQUIRED] [COMPONENTS float double])
#
# Imported targets:
#   FFTW3::fftw3f  single precision (libfftw3f)
#   FFTW3::fftw3   double precision (libfftw3)
# Result variables:
#   FFTW3_FOUND, FFTW3_INCLUDE_DIR, FFTW3_<component>_FOUND, FFTW3_<lib>_LIBRARY
# Hints: FFTW3_ROOT or the environment variable FFTW_ROOT.

if(NOT FFTW3_FIND_COMPONENTS)
  set(FFTW3_FIND_COMPONENTS float double)
endif()

find_path(FFTW3_INCLUDE_DIR fftw3.h
  HINTS ${FFTW3_ROOT} ENV FFTW_ROOT ENV FFTW3_ROOT
  PATH_SUFFIXES include)

set(_fftw3_lib_float fftw3f)
set(_fftw3_lib_double fftw3)
set(_fftw3_required_vars FFTW3_INCLUDE_DIR)
foreach(_comp IN LISTS FFTW3_FIND_COMPONENTS)
  if(NOT DEFINED _fftw3_lib_${_comp})
    message(FATAL_ERROR "FindFFTW3: unknown component '${_comp}' (use float, double)")
  endif()
  set(_lib ${_fftw3_lib_${_comp}})
  find_library(FFTW3_${_lib}_LIBRARY NAMES ${_lib}
    HINTS ${FFTW3_ROOT} ENV FFTW_ROOT ENV FFTW3_ROOT
    PATH_SUFFIXES lib lib64)
  if(FFTW3_${_lib}_LIBRARY AND FFTW3_INCLUDE_DIR)
    set(FFTW3_${_comp}_FOUND TRUE)
    if(NOT TARGET FFTW3::${_lib})
      add_library(FFTW3::${_lib} UNKNOWN IMPORTED)
      set_target_properties(FFTW3::${_lib} PROPERTIES
        IMPORTED_LOCATION "${FFTW3_${_lib}_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${FFTW3_INCLUDE_DIR}")
    endif()
  else()
    set(FFTW3_${_comp}_FOUND FALSE)
  endif()
  if(FFTW3_FIND_REQUIRED_${_comp})
    list(APPEND _fftw3_required_vars FFTW3_${_lib}_LIBRARY)
  endif()
endforeach()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(FFTW3
  REQUIRED_VARS ${_fftw3_required_vars}
  HANDLE_COMPONENTS)
mark_as_advanced(FFTW3_INCLUDE_DIR FFTW3_fftw3f_LIBRARY FFTW3_fftw3_LIBRARY)
