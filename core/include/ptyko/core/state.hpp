#pragma once
// What a reconstruction works on, per rank:
//  * LocalData: this rank's frames (corner-centred intensities), their probe
//    positions in the rank's object tile, and the detector mask;
//  * State: the object tile, the probe modes, and the history that a
//    checkpoint must keep.
// Both live in the memory space of the execution space the solvers run on.

#include <ptyko/core/frame_stack.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ptyko {

template <class T, class ExecSpace>
struct LocalData {
  using memory_space = typename ExecSpace::memory_space;
  /// (n, D, D) measured intensities, zero frequency at [0][0], as uint16
  /// counts or float32 (FrameStack).
  FrameStack<memory_space> frames;
  /// (n, 2) probe centres (y, x) in pixels of this rank's object tile.
  PositionView<T, memory_space> positions;
  /// Global object pixel of the tile's pixel (0, 0): positions are relative to it.
  int tile_y = 0, tile_x = 0;
  /// (D, D) 1 = measured; extent 0 when every pixel is measured.
  MaskView<memory_space> mask;
  /// File frame index of each local frame (global numbering).
  std::vector<std::size_t> frame_ids;
  /// Global number of frames over all ranks.
  std::size_t global_frames = 0;
  /// Detector units per photon (an integrating detector's gain; 1 for
  /// photon counts): the frames' counting noise, and so every comparison of
  /// a cost with it (noise_floor.hpp), is computed in photons. 0: not known
  /// (float frames that are not counts), and nothing is compared with it.
  double adu_per_photon = 1;
  /// (D * D, corner-centred) 1 where a local frame held NaN or infinity at
  /// a measured pixel: load_local_data masked those pixels. Empty: none.
  /// The ranks' union is masked on every rank (the driver: collective).
  std::vector<std::uint8_t> nonfinite_pixels;
  /// File frames of this rank that held no intensity in most pixels (NaN,
  /// infinity, or negative values and no counts: failed readouts), loaded
  /// as zeros.
  std::vector<std::size_t> invalid_frames;
  /// Negative values at measured pixels of this rank's frames (the noise
  /// of a subtracted background), loaded as 0, and the most negative (0: none).
  std::size_t negative_values = 0;
  float most_negative = 0;

  int local_frames() const { return int(frames.extent(0)); }
  int detector() const { return int(frames.extent(1)); }
};

template <class T, class ExecSpace>
struct State {
  using memory_space = typename ExecSpace::memory_space;
  ComplexView2<T, memory_space> object;  ///< (H, W) this rank's tile
  ComplexView3<T, memory_space> probe;   ///< (M, D, D) probe modes
  /// (D, D) incoherent background counts per frame and pixel, zero
  /// frequency at [0][0] like the frames: part of every frame's model
  /// intensity (background refinement). Extent 0: none.
  RealView2<T, memory_space> background;
  /// Momentum across epochs (momentum.hpp): the velocities of the object
  /// tile and of the probe modes, shaped as they are. Extent 0: none.
  ComplexView2<T, memory_space> object_velocity;
  ComplexView3<T, memory_space> probe_velocity;
  /// Pixel of the global object at the tile's (0, 0).
  int tile_y = 0, tile_x = 0;
  int epoch = 0;                         ///< epochs completed
  std::vector<double> cost;              ///< mean cost per frame, per epoch
  std::vector<double> epoch_seconds;
  std::vector<double> bytes_moved;       ///< per epoch, this rank
  std::uint64_t rng_state = 0;           ///< batch-order generator, for resume

  int modes() const { return int(probe.extent(0)); }
};

}  // namespace ptyko
