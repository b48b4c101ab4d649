// Momentum across epochs (core/momentum.hpp): the velocity and step it
// takes, element by element; no step while the cost rose twice running; a
// probe the epoch left alone neither moves nor loses its velocity; the
// velocity follows a recombination of the modes and a rescaling of object
// and probe; --object-clip holds after the step.
#include <ptyko/core/momentum.hpp>
#include <ptyko/core/probe_modes.hpp>

#include <test_utils.hpp>

#include <gtest/gtest.h>

#include <complex>
#include <vector>

namespace {

using namespace ptyko;
using test::ExecSpace;
using test::MemSpace;
using C = std::complex<double>;
using St = State<double, ExecSpace>;

constexpr double friction = 0.9;
constexpr double no_floor = 0;  ///< the counting-noise floor unknown: no limit

C host_value(Complex<double> v) { return {v.real(), v.imag()}; }

template <class View>
std::vector<C> values(View const& v) {
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);  // device -> host
  std::vector<C> out;
  for (std::size_t k = 0; k < h.span(); ++k) out.push_back(host_value(h.data()[k]));
  return out;
}

template <class View>
void fill(View const& v, std::vector<C> const& x) {
  auto h = Kokkos::create_mirror_view(v);
  ASSERT_EQ(h.span(), x.size());
  for (std::size_t k = 0; k < x.size(); ++k) h.data()[k] = Complex<double>(x[k].real(), x[k].imag());
  Kokkos::deep_copy(v, h);  // host -> device
}

/// A 1 x 3 object and a 1 x 1 x 2 probe with the given values.
St small_state(std::vector<C> const& object, std::vector<C> const& probe) {
  St s;
  s.object = ComplexView2<double, MemSpace>("object", 1, 3);
  s.probe = ComplexView3<double, MemSpace>("probe", 1, 1, 2);
  fill(s.object, object);
  fill(s.probe, probe);
  return s;
}

void expect_values(std::vector<C> const& got, std::vector<C> const& want, char const* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t k = 0; k < got.size(); ++k) EXPECT_LT(std::abs(got[k] - want[k]), 1e-12) << what << " " << k;
}

// Three epochs by hand: the first, which forms the object from its blank
// start, is not carried on; then the velocity is the epoch's update plus
// friction times the last velocity, and the fields move on by
// momentum_gain of it.
TEST(Momentum, VelocityAndStep) {
  ExecSpace space;
  std::vector<C> const o0{{1, 0}, {0.5, 0.5}, {-1, 2}}, p0{{2, 1}, {0, -1}};
  St s = small_state(o0, p0);
  EpochMomentum<double, ExecSpace> momentum(space, s, friction, false);
  expect_values(values(s.object_velocity), {0, 0, 0}, "velocity starts at zero");
  auto const plus = [](std::vector<C> a, std::vector<C> const& b, double f = 1) {
    for (std::size_t k = 0; k < a.size(); ++k) a[k] += f * b[k];
    return a;
  };
  // Epoch 1: the solver moves the object by d0: no step, no velocity.
  std::vector<C> const d0{{0.5, 0}, {0.5, 0}, {0, -1}};
  momentum.begin(space, s, no_floor);
  std::vector<C> const o1 = plus(o0, d0);
  fill(s.object, o1);
  EXPECT_FALSE(momentum.end(space, s, 200.0, no_floor, true));
  s.cost.push_back(200.0);
  expect_values(values(s.object), o1, "object after epoch 1");
  expect_values(values(s.object_velocity), {0, 0, 0}, "object velocity after epoch 1");
  expect_values(values(s.probe_velocity), {0, 0}, "probe velocity after epoch 1");
  // Epoch 2: the object moves by d1 and the probe by e1; both step.
  std::vector<C> const d1{{0.1, 0}, {0, -0.2}, {0.3, 0.3}}, e1{{-0.5, 0}, {0, 0.25}};
  momentum.begin(space, s, no_floor);
  std::vector<C> const o2 = plus(o1, d1), p2 = plus(p0, e1);
  fill(s.object, o2);
  fill(s.probe, p2);
  EXPECT_TRUE(momentum.end(space, s, 100.0, no_floor, true));
  s.cost.push_back(100.0);
  std::vector<C> const o2m = plus(o2, d1, momentum_gain), p2m = plus(p2, e1, momentum_gain);
  expect_values(values(s.object), o2m, "object after epoch 2");
  expect_values(values(s.probe), p2m, "probe after epoch 2");
  expect_values(values(s.object_velocity), d1, "object velocity after epoch 2");
  expect_values(values(s.probe_velocity), e1, "probe velocity after epoch 2");
  // Epoch 3: another update d2; the velocity keeps 0.9 of d1.
  std::vector<C> const d2{{0, 0.1}, {0.2, 0}, {-0.1, 0}};
  momentum.begin(space, s, no_floor);
  std::vector<C> const o3 = plus(o2m, d2);
  fill(s.object, o3);
  EXPECT_TRUE(momentum.end(space, s, 90.0, no_floor, true));
  std::vector<C> const v3 = plus(d2, d1, friction);
  expect_values(values(s.object_velocity), v3, "object velocity after epoch 3");
  expect_values(values(s.object), plus(o3, v3, momentum_gain), "object after epoch 3");
  // The probe was updated in epoch 3 but did not change: its velocity is
  // 0.9 e1 and it moved by half of that.
  expect_values(values(s.probe), plus(p2m, e1, momentum_gain * friction), "probe after epoch 3");
}

// The cost rose in this epoch and the one before: no step, the velocity is
// halved (this epoch's update included); a probe the epoch did not update
// keeps its place and its velocity.
TEST(Momentum, NoStepWhileTheCostRisesAndNoneForAProbeLeftAlone) {
  ExecSpace space;
  std::vector<C> const o0{{1, 0}, {1, 0}, {1, 0}}, p0{{1, 1}, {1, -1}};
  St s = small_state(o0, p0);
  EpochMomentum<double, ExecSpace> momentum(space, s, friction, false);
  fill(s.object_velocity, {{0.2, 0}, {0, 0.2}, {0, 0}});
  fill(s.probe_velocity, {{0.1, 0}, {0, 0.1}});
  s.cost = {50.0, 60.0};
  momentum.begin(space, s, no_floor);
  std::vector<C> const o1{{1.1, 0}, {1, 0}, {1, 0}};
  fill(s.object, o1);
  EXPECT_FALSE(momentum.end(space, s, 70.0, no_floor, false));
  expect_values(values(s.object), o1, "no step");
  expect_values(values(s.object_velocity), {{0.5 * (0.1 + 0.18), 0}, {0, 0.5 * 0.18}, {0, 0}}, "halved");
  expect_values(values(s.probe), p0, "probe left alone");
  expect_values(values(s.probe_velocity), {{0.1, 0}, {0, 0.1}}, "probe velocity kept");
  // A fall after one rise steps again; the probe, still not updated, stays.
  s.cost = {60.0, 70.0};
  momentum.begin(space, s, no_floor);
  EXPECT_TRUE(momentum.end(space, s, 65.0, no_floor, false));
  expect_values(values(s.probe), p0, "probe left alone again");
  std::vector<C> const v = values(s.object_velocity);
  EXPECT_LT(std::abs(v[0] - C(friction * 0.14, 0)), 1e-12);
  expect_values(values(s.object), {o1[0] + momentum_gain * v[0], {1, momentum_gain * v[1].imag()}, {1, 0}},
                "stepped");
}

// Down to about the counting noise (below momentum_noise_limit times the
// floor) the epochs' updates are mostly noise: no step, the velocities
// zero, and no passes while the costs stay there; above it again, the
// velocity starts afresh.
TEST(Momentum, NoStepOnceTheFramesAreExplainedToTheirNoise) {
  ExecSpace space;
  std::vector<C> const o0{{1, 0}, {1, 0}, {1, 0}};
  St s = small_state(o0, {{1, 0}, {1, 0}});
  EpochMomentum<double, ExecSpace> momentum(space, s, friction, false);
  fill(s.object_velocity, {{0.2, 0}, {0, 0}, {0, 0}});
  s.cost = {120.0, 110.0};
  double const floor = 100.0 / momentum_noise_limit;
  momentum.begin(space, s, floor);
  std::vector<C> const o1{{1, 0.1}, {1, 0}, {1, 0}};
  fill(s.object, o1);
  EXPECT_FALSE(momentum.end(space, s, 99.0, floor, true));  // falling, but explained
  s.cost.push_back(99.0);
  expect_values(values(s.object), o1, "no step");
  expect_values(values(s.object_velocity), {0, 0, 0}, "velocity zero");
  // Still explained: no pass over the fields at all.
  fill(s.object_velocity, {{7, 0}, {0, 0}, {0, 0}});  // a marker only a pass would change
  momentum.begin(space, s, floor);
  EXPECT_FALSE(momentum.end(space, s, 98.0, floor, true));
  s.cost.push_back(98.0);
  expect_values(values(s.object), o1, "idle");
  expect_values(values(s.object_velocity), {{7, 0}, {0, 0}, {0, 0}}, "untouched");
  fill(s.object_velocity, {0, 0, 0});
  // The cost rises above the limit (say after a refinement): no pass was
  // made at its start either; the next epoch steps from a fresh velocity.
  momentum.begin(space, s, floor);
  EXPECT_FALSE(momentum.end(space, s, 105.0, floor, true));
  s.cost.push_back(105.0);
  momentum.begin(space, s, floor);
  std::vector<C> const d{{0.02, 0}, {0, 0.04}, {0, 0}};
  std::vector<C> o2 = o1;
  for (int k = 0; k < 3; ++k) o2[k] += d[k];
  fill(s.object, o2);
  EXPECT_TRUE(momentum.end(space, s, 104.0, floor, true));
  for (int k = 0; k < 3; ++k) o2[k] += momentum_gain * d[k];
  expect_values(values(s.object_velocity), d, "fresh velocity");
  expect_values(values(s.object), o2, "stepped");
}

// With --object-clip the step cannot push |O| above 1.
TEST(Momentum, ObjectClipHoldsAfterTheStep) {
  ExecSpace space;
  St s = small_state({{0.9, 0}, {0, 0.5}, {0.6, 0}}, {{1, 0}, {1, 0}});
  EpochMomentum<double, ExecSpace> momentum(space, s, friction, true);
  s.cost = {20.0};
  momentum.begin(space, s, no_floor);
  fill(s.object, {{0.99, 0}, {0, 0.6}, {0.5, 0}});
  EXPECT_TRUE(momentum.end(space, s, 10.0, no_floor, true));
  auto const o = values(s.object);
  EXPECT_NEAR(std::abs(o[0]), 1.0, 1e-12);  // 0.99 + 0.045 clipped
  EXPECT_NEAR(o[1].imag(), 0.65, 1e-12);
  EXPECT_NEAR(o[2].real(), 0.45, 1e-12);
}

// Orthogonalising the modes recombines them (new mode k = sum_m V(m, k) old
// mode m); the velocity must be recombined alike, or the next epoch's
// momentum pushes each new mode along an old one's velocity. A velocity
// proportional to the modes stays proportional to them. Rescaling object
// by 1 / c and probe by c scales their velocities alike.
TEST(Momentum, VelocityFollowsTheModesAndTheScale) {
  ExecSpace space;
  int const M = 3, D = 4;
  St s;
  s.object = ComplexView2<double, MemSpace>("object", 2, 2);
  s.probe = ComplexView3<double, MemSpace>("probe", M, D, D);
  std::vector<C> p;
  for (int m = 0; m < M; ++m)
    for (int k = 0; k < D * D; ++k)
      p.emplace_back(std::cos(0.7 * k + m) + (m == 2 ? 0.5 : 0.0), std::sin(0.3 * k * (m + 1)) / (m + 1));
  fill(s.probe, p);
  EpochMomentum<double, ExecSpace> momentum(space, s, friction, false);
  C const a(0.3, -0.2);
  std::vector<C> v;
  for (C x : p) v.push_back(a * x);
  fill(s.probe_velocity, v);
  fill(s.object_velocity, {{1, 0}, {0, 1}, {2, 0}, {0, 2}});
  ComplexView2<double, MemSpace> mix("mix", M, M);
  orthogonalize_modes<double>(space, s.probe, nullptr, mix);
  momentum.modes_recombined(space, s, mix);
  std::vector<C> want;
  for (C x : values(s.probe)) want.push_back(a * x);
  expect_values(values(s.probe_velocity), want, "velocity of the recombined modes");
  momentum.rescaled(space, s, 2.0);
  for (C& x : want) x *= 2.0;
  expect_values(values(s.probe_velocity), want, "probe velocity rescaled");
  expect_values(values(s.object_velocity), {{0.5, 0}, {0, 0.5}, {1, 0}, {0, 1}}, "object velocity rescaled");
}

}  // namespace
