#include <ptyko/core/batching.hpp>
#include <ptyko/kernels/error.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ptyko {

BatchingScheme parse_batching(std::string const& name) {
  if (name == "sparse") return BatchingScheme::sparse;
  if (name == "compact") return BatchingScheme::compact;
  if (name == "random") return BatchingScheme::random;
  PTYKO_FAIL("--batching '", name, "' is not a batching scheme: use sparse, compact or random");
}

std::string to_string(BatchingScheme s) {
  switch (s) {
    case BatchingScheme::sparse: return "sparse";
    case BatchingScheme::compact: return "compact";
    default: return "random";
  }
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace {

// Fisher-Yates with an unbiased bounded draw, so the permutation is the same
// on every platform and standard library.
template <class It>
void seeded_shuffle(It first, It last, std::uint64_t& state) {
  auto const n = std::uint64_t(last - first);
  for (std::uint64_t i = n; i > 1; --i) {
    std::uint64_t const limit = ~std::uint64_t(0) - (~std::uint64_t(0) % i);
    std::uint64_t r;
    do r = splitmix64(state);
    while (r >= limit);
    std::iter_swap(first + (i - 1), first + (r % i));
  }
}

void bisect(std::vector<std::array<double, 2>> const& p, std::vector<int>::iterator first,
            std::vector<int>::iterator last, int groups, std::vector<std::vector<int>>& out) {
  if (groups == 1) {
    out.emplace_back(first, last);
    return;
  }
  double ymin = p[*first][0], ymax = ymin, xmin = p[*first][1], xmax = xmin;
  for (auto it = first; it != last; ++it) {
    ymin = std::min(ymin, p[*it][0]);
    ymax = std::max(ymax, p[*it][0]);
    xmin = std::min(xmin, p[*it][1]);
    xmax = std::max(xmax, p[*it][1]);
  }
  int const axis = (ymax - ymin) >= (xmax - xmin) ? 0 : 1;
  int const left_groups = groups / 2;
  auto const n = last - first;
  auto const left_n = (n * left_groups + groups / 2) / groups;  // proportional, rounded
  auto mid = first + left_n;
  // Ties broken by index: the cut is deterministic.
  std::nth_element(first, mid, last, [&](int a, int b) {
    return p[a][axis] < p[b][axis] || (p[a][axis] == p[b][axis] && a < b);
  });
  bisect(p, first, mid, left_groups, out);
  bisect(p, mid, last, groups - left_groups, out);
}

}  // namespace

std::vector<std::vector<int>> compact_groups(std::vector<std::array<double, 2>> const& positions,
                                             int groups) {
  int const n = int(positions.size());
  PTYKO_REQUIRE(groups >= 1 && groups <= n, "cannot split ", n, " positions into ", groups,
                " groups: need between 1 and ", n, " groups");
  std::vector<int> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::vector<std::vector<int>> out;
  out.reserve(groups);
  bisect(positions, idx.begin(), idx.end(), groups, out);
  for (auto& g : out) std::sort(g.begin(), g.end());
  return out;
}

std::vector<std::vector<int>> make_batches(std::vector<std::array<double, 2>> const& positions,
                                           int batch_size, BatchingScheme scheme, std::uint64_t seed) {
  int const n = int(positions.size());
  PTYKO_REQUIRE(batch_size >= 1 && batch_size <= n, "--batch-size ", batch_size,
                " must be between 1 and the number of frames (", n, ")");
  int const batches = (n + batch_size - 1) / batch_size;
  std::uint64_t state = seed ^ 0x5bd1e995ULL;
  std::vector<std::vector<int>> out;
  if (scheme == BatchingScheme::compact) {
    out = compact_groups(positions, batches);
  } else if (scheme == BatchingScheme::random) {
    std::vector<int> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    seeded_shuffle(idx.begin(), idx.end(), state);
    for (int b = 0; b < batches; ++b) {
      auto const lo = std::size_t(n) * b / batches, hi = std::size_t(n) * (b + 1) / batches;
      out.emplace_back(idx.begin() + lo, idx.begin() + hi);
    }
  } else {
    // batch_size compact groups of ~`batches` positions; batch k takes the
    // k-th member (in a seeded order) of every group.
    auto groups = compact_groups(positions, std::min(batch_size, n));
    out.assign(batches, {});
    for (auto& g : groups) {
      seeded_shuffle(g.begin(), g.end(), state);
      for (std::size_t k = 0; k < g.size(); ++k) out[k % batches].push_back(g[k]);
    }
  }
  for (auto& b : out) std::sort(b.begin(), b.end());
  out.erase(std::remove_if(out.begin(), out.end(), [](auto const& b) { return b.empty(); }), out.end());
  return out;
}

std::vector<int> walking_order(std::vector<std::array<double, 2>> const& positions, double band) {
  PTYKO_REQUIRE(band > 0, "walking_order: the band must be > 0 pixels, got ", band);
  std::vector<int> order(positions.size());
  std::iota(order.begin(), order.end(), 0);
  auto const placed = [&](int k) { return std::isfinite(positions[k][0]) && std::isfinite(positions[k][1]); };
  auto const band_of = [&](int k) { return std::floor(positions[k][0] / band); };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    bool const pa = placed(a), pb = placed(b);
    if (!pa || !pb) return pa && !pb;
    double const ba = band_of(a), bb = band_of(b);
    if (ba != bb) return ba < bb;
    bool const rightwards = std::fmod(std::fabs(ba), 2.0) == 0;
    return rightwards ? positions[a][1] < positions[b][1] : positions[a][1] > positions[b][1];
  });
  return order;
}

std::vector<int> batch_order(int batches, std::uint64_t seed, int epoch) {
  std::vector<int> order(batches);
  std::iota(order.begin(), order.end(), 0);
  std::uint64_t state = seed * 0x9e3779b97f4a7c15ULL + std::uint64_t(epoch) + 1;
  seeded_shuffle(order.begin(), order.end(), state);
  return order;
}

}  // namespace ptyko
