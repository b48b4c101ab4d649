#pragma once
// Detector-plane kernels on far fields Psi (B, M, D, D) and measured
// intensities d (N, D, D), both corner-centred (un-shifted on load):
//  * far_field_intensity: I = sum_m |Psi_m|^2
//  * modulus_projection (Gaussian/amplitude noise), fused with its cost
//      Psi_m <- Psi_m * sqrt(d) / (sqrt(I) + eps)  on measured pixels
//      cost  =  sum (sqrt(I) - sqrt(d))^2
//  * poisson_gradient, fused with its cost
//      Psi_m <- Psi_m * (d / (I + eps) - 1)         on measured pixels, 0 elsewhere
//      cost  =  sum (I - d - d log((I + eps) / (d + eps)))   (>= 0, 0 at a perfect fit)
// Masked pixels (mask == 0) are never compared with the data: the modulus
// projection keeps the model value there and the costs skip them.

#include <ptyko/kernels/compat.hpp>
#include <ptyko/kernels/error.hpp>
#include <ptyko/kernels/types.hpp>

#include <Kokkos_Core.hpp>

namespace ptyko {

enum class NoiseModel { gaussian, poisson };

/// I(b, i, j) = sum_m |Psi(b, m, i, j)|^2 for b < B. Non-blocking.
template <class ExecSpace, class T, class Mem>
void far_field_intensity(ExecSpace const& space, int B, ComplexView4<T, Mem> const& Psi,
                         RealView3<T, Mem> const& intensity) {
  int const M = int(Psi.extent(1));
  int const D = int(Psi.extent(2));
  auto F = Psi;
  auto I = intensity;
  Kokkos::parallel_for(
      "ptyko::far_field_intensity", Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(B) * D * D),
      KOKKOS_LAMBDA(std::size_t k) {
        int const b = int(k / (std::size_t(D) * D));
        int const i = int((k / D) % D);
        int const j = int(k % D);
        T sum = 0;
        for (int m = 0; m < M; ++m) sum += math::norm2(F(b, m, i, j));
        I(b, i, j) = sum;
      });
}

namespace impl {
// Loops over the (b, i, j) detector pixels of a batch, with the frame's
// measured data d and the model intensity I; `op` updates Psi in place and
// returns the pixel's cost. Returns the total cost (blocking: a host scalar).
template <class ExecSpace, class T, class Mem, class DataView, class Op>
double fourier_pixel_reduce(ExecSpace const& space, char const* label, int B,
                            ComplexView4<T, Mem> const& Psi, DataView const& data,
                            IndexView<Mem> const& indices, MaskView<Mem> const& mask, Op op) {
  int const M = int(Psi.extent(1));
  int const D = int(Psi.extent(2));
  bool const has_mask = mask.extent(0) > 0;
  auto F = Psi;
  auto d = data;
  auto idx = indices;
  auto msk = mask;
  double cost = 0;
  Kokkos::parallel_reduce(
      label, Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(B) * D * D),
      KOKKOS_LAMBDA(std::size_t k, double& acc) {
        int const b = int(k / (std::size_t(D) * D));
        int const i = int((k / D) % D);
        int const j = int(k % D);
        if (has_mask && msk(i, j) == 0) return;
        T I = 0;
        for (int m = 0; m < M; ++m) I += math::norm2(F(b, m, i, j));
        T const meas = T(d(idx(b), i, j));
        if constexpr (Op::modifies) {
          T const factor = op.factor(I, meas);
          for (int m = 0; m < M; ++m) F(b, m, i, j) *= factor;
        }
        acc += double(op.cost(I, meas));
      },
      cost);
  return cost;
}

template <class T>
struct GaussianOp {
  static constexpr bool modifies = true;
  T eps;
  KOKKOS_INLINE_FUNCTION T factor(T I, T d) const { return math::sqrt(d) / (math::sqrt(I) + eps); }
  KOKKOS_INLINE_FUNCTION T cost(T I, T d) const {
    T const r = math::sqrt(I) - math::sqrt(d);
    return r * r;
  }
};

template <class T>
struct PoissonOp {
  static constexpr bool modifies = true;
  T eps;
  KOKKOS_INLINE_FUNCTION T factor(T I, T d) const { return d / (I + eps) - T(1); }
  KOKKOS_INLINE_FUNCTION T cost(T I, T d) const {
    return I - d - d * math::log((I + eps) / (d + eps));
  }
};

template <class T>
struct GaussianCostOp : GaussianOp<T> {
  static constexpr bool modifies = false;
};
template <class T>
struct PoissonCostOp : PoissonOp<T> {
  static constexpr bool modifies = false;
};
}  // namespace impl

/// Gaussian modulus projection of Psi (B, M, D, D) in place, against frames
/// data(indices(b)); an empty mask View means all pixels are measured.
/// Returns the Gaussian cost of the Psi it received (blocking).
template <class ExecSpace, class T, class Mem, class DataView>
double modulus_projection(ExecSpace const& space, int B, ComplexView4<T, Mem> const& Psi,
                          DataView const& data, IndexView<Mem> const& indices,
                          MaskView<Mem> const& mask, T eps) {
  return impl::fourier_pixel_reduce(space, "ptyko::modulus_projection", B, Psi, data, indices, mask,
                                    impl::GaussianOp<T>{eps});
}

/// Poisson gradient direction chi = Psi (d / (I + eps) - 1) in place, zero on
/// masked pixels. Returns the Poisson cost of the Psi it received (blocking).
template <class ExecSpace, class T, class Mem, class DataView>
double poisson_gradient(ExecSpace const& space, int B, ComplexView4<T, Mem> const& Psi,
                        DataView const& data, IndexView<Mem> const& indices,
                        MaskView<Mem> const& mask, T eps) {
  // Masked pixels must not pull the model: zero them after the update.
  double const cost = impl::fourier_pixel_reduce(space, "ptyko::poisson_gradient", B, Psi, data,
                                                 indices, mask, impl::PoissonOp<T>{eps});
  if (mask.extent(0) > 0) {
    int const M = int(Psi.extent(1));
    int const D = int(Psi.extent(2));
    auto F = Psi;
    auto msk = mask;
    Kokkos::parallel_for(
        "ptyko::poisson_gradient::mask",
        Kokkos::RangePolicy<ExecSpace>(space, 0, std::size_t(B) * M * D * D),
        KOKKOS_LAMBDA(std::size_t k) {
          int const i = int((k / D) % D);
          int const j = int(k % D);
          if (msk(i, j) == 0) F.data()[k] = Complex<T>(0);
        });
  }
  return cost;
}

/// Cost of the model far fields Psi against the data under `noise`, without
/// changing Psi (blocking).
template <class ExecSpace, class T, class Mem, class DataView>
double data_cost(ExecSpace const& space, NoiseModel noise, int B, ComplexView4<T, Mem> const& Psi,
                 DataView const& data, IndexView<Mem> const& indices, MaskView<Mem> const& mask,
                 T eps) {
  if (noise == NoiseModel::gaussian) {
    return impl::fourier_pixel_reduce(space, "ptyko::data_cost::gaussian", B, Psi, data, indices,
                                      mask, impl::GaussianCostOp<T>{{eps}});
  }
  return impl::fourier_pixel_reduce(space, "ptyko::data_cost::poisson", B, Psi, data, indices, mask,
                                    impl::PoissonCostOp<T>{{eps}});
}

}  // namespace ptyko
