#pragma once
// Eigen-decomposition of small Hermitian matrices on the host (cyclic complex
// Jacobi). Used for probe-mode orthogonalisation, where the matrix is the
// M x M Gram matrix of the modes (M <= 16), so O(M^3) per sweep is nothing.

#include <complex>
#include <vector>

namespace ptyko {

struct HermitianEigen {
  std::vector<double> values;                ///< descending
  std::vector<std::complex<double>> vectors; ///< n x n, row-major; column k is the k-th eigenvector
};

/// Eigenvalues (descending) and orthonormal eigenvectors of the n x n
/// Hermitian matrix `a` (row-major; only its Hermitian part is used).
HermitianEigen hermitian_eigen(std::vector<std::complex<double>> a, int n);

}  // namespace ptyko
