#include <ptyko/core/hermitian_eigen.hpp>
#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ptyko {

HermitianEigen hermitian_eigen(std::vector<std::complex<double>> a, int n) {
  using cplx = std::complex<double>;
  PTYKO_ASSERT(int(a.size()) == n * n, "matrix is not ", n, " x ", n);
  auto A = [&](int i, int j) -> cplx& { return a[std::size_t(i) * n + j]; };
  // Symmetrise: use the Hermitian part only.
  for (int i = 0; i < n; ++i) {
    A(i, i) = A(i, i).real();
    for (int j = i + 1; j < n; ++j) {
      cplx const h = 0.5 * (A(i, j) + std::conj(A(j, i)));
      A(i, j) = h;
      A(j, i) = std::conj(h);
    }
  }
  std::vector<cplx> v(std::size_t(n) * n, 0.0);
  for (int i = 0; i < n; ++i) v[std::size_t(i) * n + i] = 1.0;
  auto V = [&](int i, int j) -> cplx& { return v[std::size_t(i) * n + j]; };

  double scale = 0;
  for (auto const& x : a) scale += std::norm(x);
  scale = std::sqrt(scale);
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) off += std::norm(A(p, q));
    if (std::sqrt(off) <= 1e-15 * scale || scale == 0) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        double const h = std::abs(A(p, q));
        if (h == 0) continue;
        // R = diag(1, e^{-i theta}) J makes the (p, q) block real symmetric
        // and then diagonal, with tan(2 phi) = 2 h / (a_qq - a_pp).
        cplx const e = A(p, q) / h;  // e^{i theta}
        double const phi = 0.5 * std::atan2(2 * h, A(q, q).real() - A(p, p).real());
        double const c = std::cos(phi), s = std::sin(phi);
        // Columns p, q of R: R(p,p) = c, R(p,q) = s, R(q,p) = -s e^{-i theta}, R(q,q) = c e^{-i theta}
        cplx const rpp = c, rpq = s, rqp = -s * std::conj(e), rqq = c * std::conj(e);
        for (int k = 0; k < n; ++k) {  // A <- A R (columns)
          cplx const akp = A(k, p), akq = A(k, q);
          A(k, p) = akp * rpp + akq * rqp;
          A(k, q) = akp * rpq + akq * rqq;
        }
        for (int k = 0; k < n; ++k) {  // A <- R^H A (rows)
          cplx const apk = A(p, k), aqk = A(q, k);
          A(p, k) = std::conj(rpp) * apk + std::conj(rqp) * aqk;
          A(q, k) = std::conj(rpq) * apk + std::conj(rqq) * aqk;
        }
        A(p, q) = A(q, p) = 0;
        for (int k = 0; k < n; ++k) {  // V <- V R
          cplx const vkp = V(k, p), vkq = V(k, q);
          V(k, p) = vkp * rpp + vkq * rqp;
          V(k, q) = vkp * rpq + vkq * rqq;
        }
      }
  }
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return A(x, x).real() > A(y, y).real(); });
  HermitianEigen out;
  out.values.resize(n);
  out.vectors.resize(std::size_t(n) * n);
  for (int k = 0; k < n; ++k) {
    out.values[k] = A(order[k], order[k]).real();
    for (int i = 0; i < n; ++i) out.vectors[std::size_t(i) * n + k] = V(i, order[k]);
  }
  return out;
}

}  // namespace ptyko
