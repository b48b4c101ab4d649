# Finds every dependency the ptyko libraries need and wraps the ones without
# a proper CMake target in imported targets named ptyko_deps::*.
# Installed next to ptykoConfig.cmake, which includes it again so that users
# of find_package(ptyko) get the same targets (imported targets are not
# exported). Test and benchmark dependencies are found in tests/ and bench/.

include(${CMAKE_CURRENT_LIST_DIR}/PtykoFindKokkos.cmake)
ptyko_find_kokkos()

find_package(MPI REQUIRED COMPONENTS C)
# C++ code that includes mpi.h (ours, and hdf5.h's) must not pull in the
# deprecated MPI C++ bindings, which would need libmpi_cxx at link time.
if(NOT TARGET ptyko_deps::mpi)
  add_library(ptyko_deps::mpi INTERFACE IMPORTED GLOBAL)
  target_link_libraries(ptyko_deps::mpi INTERFACE MPI::MPI_C)
  target_compile_definitions(ptyko_deps::mpi INTERFACE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
endif()

# Parallel HDF5 (libhdf5-openmpi-dev on Debian); we use its C API only.
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 REQUIRED COMPONENTS C)
if(NOT TARGET ptyko_deps::hdf5)
  add_library(ptyko_deps::hdf5 INTERFACE IMPORTED GLOBAL)
  target_include_directories(ptyko_deps::hdf5 SYSTEM INTERFACE ${HDF5_C_INCLUDE_DIRS})
  target_link_libraries(ptyko_deps::hdf5 INTERFACE ${HDF5_C_LIBRARIES})
  if(HDF5_IS_PARALLEL)
    target_link_libraries(ptyko_deps::hdf5 INTERFACE ptyko_deps::mpi)
  endif()
  target_compile_definitions(ptyko_deps::hdf5 INTERFACE ${HDF5_C_DEFINITIONS})
endif()

# FFTW3 is the host FFT backend (float and double precision).
find_package(FFTW3 REQUIRED COMPONENTS float double)

# GPU FFT backends, only when Kokkos was built for those devices.
if(Kokkos_ENABLE_CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()
if(Kokkos_ENABLE_HIP)
  find_package(hipfft REQUIRED)
endif()

find_package(Threads REQUIRED)

# Messages and pictures (core/ writes PNG previews next to results).
find_package(fmt REQUIRED)
find_package(PNG REQUIRED)
# Large datasets deflated on several threads (core/src/chunk_deflate.cpp).
find_package(ZLIB REQUIRED)
