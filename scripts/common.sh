# Shared by scripts/demo, scripts/test and scripts/bench (sourced, not run).
# Builds ptyko (Release) into build/ and sets up OpenMPI for root/CI.

ptyko_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${PTYKO_BUILD_DIR:-$ptyko_root/build}"
jobs="${PTYKO_JOBS:-$(nproc)}"

# OpenMPI refuses root unless told, and more ranks than cores unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
# Containers often lack a usable shared-memory transport for vader's CMA.
export OMPI_MCA_btl_vader_single_copy_mechanism=none

ptyko_build() {
  "$ptyko_root/scripts/install-deps"
  cmake -S "$ptyko_root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@"
  cmake --build "$build_dir" -j "$jobs"
}
