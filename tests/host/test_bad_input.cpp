// Bad input (issue 2, item 7): every case throws resilin::invalid_argument (a
// std::invalid_argument) whose message names the argument and the offending value.
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>
#include <support/catch.hpp>
#include <resilin/resilin.hpp>
#include <resilin/sharp.hpp>
#include "helpers.hpp"

namespace r = resilin;
using resilin_test::message_of;

namespace {
template <class F>
std::string msg(F&& f) { return message_of<r::invalid_argument>(std::forward<F>(f)); }

double const nan_v = std::numeric_limits<double>::quiet_NaN();
double const inf_v = std::numeric_limits<double>::infinity();
}  // namespace

#define EXPECT_ERROR(expr, ...)                                                  \
  do {                                                                           \
    CHECK_THROWS_AS(expr, r::invalid_argument);                                  \
    CHECK_THROWS_AS(expr, std::invalid_argument);                                \
    auto const message_ = msg([&] { (void)(expr); });                            \
    INFO("message: " << message_);                                               \
    for (char const* part_ : {__VA_ARGS__}) CHECK_THAT(message_, RESILIN_CONTAINS(part_)); \
  } while (0)

TEST_CASE("empty series", "[errors]") {
  std::vector<double> empty, y{1, 2, 3}, g3(3), g0;
  auto const m = r::measures::soft_dtw(1.0);
  EXPECT_ERROR(r::value(m, r::view(empty), r::view(y)), "x", "empty", "length 0");
  EXPECT_ERROR(r::value(m, r::view(y), r::view(empty)), "y", "empty", "length 0");
  EXPECT_ERROR(r::value_and_grad(m, r::view(empty), r::view(y), r::view(g0), r::view(g3)), "x", "empty");
  EXPECT_ERROR(r::dtw(empty, y), "x", "empty");
  EXPECT_ERROR(r::soft_dtw(y, empty, 1.0), "y", "empty");
  EXPECT_ERROR(r::alignment_path(r::measures::dtw(), r::view(empty), r::view(y)), "x", "empty");
}

TEST_CASE("a negative thread count in a host_backend built directly", "[errors]") {
  // host.with_threads(-3) refuses it; host_backend{-3} ran on every core
  std::vector<double> x(12, 0.5), y(12, 0.25), out(2), D(4);
  auto const X = r::make_batch(x, 2, 3, 2), Y = r::make_batch(y, 2, 3, 2);
  auto const m = r::measures::soft_dtw(1.0);
  EXPECT_ERROR(r::host.with_threads(-3), "threads", "got -3");
  EXPECT_ERROR(r::values(r::host_backend{-3}, m, X, Y, std::span<double>(out)), "threads", "got -3");
  EXPECT_ERROR(r::pairwise(r::host_backend{-1}, m, X, Y, r::matrix_view<double>{D.data(), 2, 2}), "threads", "got -1");
  EXPECT_ERROR(r::nearest_neighbors(r::host_backend{-7}, r::measures::dtw(), X, Y), "threads", "got -7");
  CHECK_NOTHROW(r::values(r::host_backend{0}, m, X, Y, std::span<double>(out)));
}

TEST_CASE("a double gamma outside float's range on float series", "[errors]") {
  // converted to float, 1e39 is inf and 1e-39 subnormal: NaN values, NaN or inf sharp values
  std::vector<float> x{0, 1, 2, 1, 0}, y{0, 1, 1, 2, 0}, gx(5), gy(5);
  for (double gamma : {1e39, 1e-39}) {
    INFO("gamma " << gamma);
    EXPECT_ERROR(r::value(r::measures::soft_dtw(gamma), r::view(x), r::view(y)), "gamma", "value type");
    EXPECT_ERROR(r::sharp_value(r::measures::soft_dtw(gamma), r::view(x), r::view(y)), "gamma", "value type");
    EXPECT_ERROR(r::value_and_grad(r::measures::soft_cdtw(gamma), r::view(x), r::view(y), r::view(gx), r::view(gy)),
                 "gamma", "value type");
  }
  CHECK(std::isfinite(r::value(r::measures::soft_dtw(0.7), r::view(x), r::view(y))));
  CHECK(std::isfinite(r::value(r::measures::soft_dtw(1e30), r::view(x), r::view(y))));
}

TEST_CASE("channel mismatch", "[errors]") {
  std::vector<double> x(12, 0.5), y(12, 0.25), gx(12), gy(12);
  auto const m = r::measures::soft_dtw(1.0);
  EXPECT_ERROR(r::value(m, r::view(x, 2), r::view(y, 3)), "channel", "2", "3");
  EXPECT_ERROR(r::value_and_grad(m, r::view(x, 2), r::view(y, 3), r::view(gx, 2), r::view(gy, 3)), "channel", "2", "3");
  EXPECT_ERROR(r::view(x, 5), "12", "5");          // 12 values cannot have 5 channels
  EXPECT_ERROR(r::view(x, 0), "channels", "got 0");
  auto const X = r::make_batch(x, 2, 3, 2);
  auto const Y = r::make_batch(y, 2, 2, 3);
  std::vector<double> out(2), D(4);
  EXPECT_ERROR(r::values(r::host, m, X, Y, std::span<double>(out)), "channel", "2", "3");
  EXPECT_ERROR(r::pairwise(r::host, m, X, Y, r::matrix_view<double>{D.data(), 2, 2}), "channel", "2", "3");
}

TEST_CASE("gamma <= 0, NaN or inf", "[errors]") {
  EXPECT_ERROR(r::measures::soft_dtw(0.0), "gamma", "got 0");
  EXPECT_ERROR(r::measures::soft_dtw(-1.0), "gamma", "got -1");
  EXPECT_ERROR(r::measures::soft_dtw(-0.0), "gamma", "got -0");
  EXPECT_ERROR(r::measures::soft_dtw(nan_v), "gamma", "got nan");
  EXPECT_ERROR(r::measures::soft_dtw(inf_v), "gamma", "got inf");
  EXPECT_ERROR(r::measures::soft_dtw(-2.5f), "gamma", "got -2.5");
  EXPECT_ERROR(r::measures::soft_dtw_divergence(-0.125), "gamma", "got -0.125");
  std::vector<double> x{1, 2}, y{3};
  EXPECT_ERROR(r::soft_dtw(x, y, 0.0), "gamma", "got 0");
  EXPECT_ERROR(r::soft_dtw(x, y, -3.0), "gamma", "got -3");
  // A measure built by hand (bypassing the factory) is still validated at the call.
  auto m = r::measures::soft_dtw(1.0);
  m.smooth.gamma = -7.0;
  EXPECT_ERROR(r::value(m, r::view(x), r::view(y)), "gamma", "got -7");
  std::vector<double> out(1);
  auto const X = r::make_batch(x, 1, 2);
  EXPECT_ERROR(r::values(r::host, m, X, X, std::span<double>(out)), "gamma", "got -7");
}

TEST_CASE("MSM and Soft-MSM cost parameters outside their domain", "[errors]") {
  EXPECT_ERROR(r::measures::msm(-1.0), "c", "got -1");
  EXPECT_ERROR(r::measures::soft_msm(1.0, nan_v), "c", "got nan");
  EXPECT_ERROR(r::measures::hard_soft_msm(inf_v), "c", "got inf");
  // Set on the cost directly (README: "set m.cost.eps"), they are refused at every entry
  // point; eps = 0 used to give NaN wherever a value repeats (u = 0 in the gate).
  std::vector<double> x{1, 2, 2, 3}, y{2, 2, 1}, gx(4), gy(3), out(1), E(12);
  auto const X = r::make_batch(x, 1, 4), Y = r::make_batch(y, 1, 3);
  auto const bad_soft = [](double c, double gamma, double eps) {
    auto m = r::measures::soft_msm(1.0);
    m.cost.c = c;
    m.cost.gamma = gamma;
    m.cost.eps = eps;
    return m;
  };
  for (double eps : {0.0, -1e-9, 1e-39, nan_v, inf_v}) {
    auto const m = bad_soft(1.0, 1.0, eps);
    EXPECT_ERROR(r::value(m, r::view(x), r::view(y)), "eps");
    EXPECT_ERROR(r::value_and_grad(m, r::view(x), r::view(y), r::view(gx), r::view(gy)), "eps");
    EXPECT_ERROR(r::values(r::host, m, X, Y, std::span<double>(out)), "eps");
    EXPECT_ERROR(r::alignment_matrix(m, r::view(x), r::view(y), r::matrix_view<double>{E.data(), 4, 3}), "eps");
  }
  EXPECT_ERROR(r::value(bad_soft(-0.5, 1.0, 1e-9), r::view(x), r::view(y)), "c", "got -0.5");
  EXPECT_ERROR(r::value(bad_soft(1.0, -2.0, 1e-9), r::view(x), r::view(y)), "gamma", "got -2");
  EXPECT_ERROR(r::value(bad_soft(1.0, nan_v, 1e-9), r::view(x), r::view(y)), "gamma", "got nan");
  auto hard = r::measures::msm();
  hard.cost.c = -3.0;
  EXPECT_ERROR(r::value(hard, r::view(x), r::view(y)), "c", "got -3");
  // the domain's edges are accepted: c = 0, inner gamma = 0 (the hard inner min), the smallest
  // eps; with it the gradients stay finite where values repeat (the gate's slope there is
  // 1 / (2 sqrt(eps)); computed as eps / (2 (u^2 + eps)^1.5) it overflowed to NaN in double once
  // eps < 1e-205, in float once eps < 1e-26)
  double const tiny = r::soft_msm_cost<double>::eps_min;
  auto edge = bad_soft(0.0, 0.0, tiny);
  CHECK(std::isfinite(r::value(edge, r::view(x), r::view(y))));
  std::vector<double> a{1, 1, 1, 2}, b{1, 2, 2, 2}, ga(4), gb(4);
  for (double eps : {tiny, 1e-30, 1e-9}) {
    auto const m = bad_soft(1.0, 1.0, eps);
    CHECK(std::isfinite(r::value_and_grad(m, r::view(a), r::view(b), r::view(ga), r::view(gb))));
    for (double g : ga) CHECK(std::isfinite(g));
    for (double g : gb) CHECK(std::isfinite(g));
    auto mf = r::measures::soft_msm(1.0f);
    mf.cost.eps = static_cast<float>(eps);
    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end()), gaf(4), gbf(4);
    CHECK(std::isfinite(r::value_and_grad(mf, r::view(af), r::view(bf), r::view(gaf), r::view(gbf))));
    for (float g : gaf) CHECK(std::isfinite(g));
    for (float g : gbf) CHECK(std::isfinite(g));
  }
}

TEST_CASE("parameters finite in double but not in the series' value type", "[errors]") {
  // msm c = 1e39 and a warp penalty of 1e39 passed their double checks and made every float
  // value inf; they are refused once the value type is known (a subnormal inner gamma too)
  std::vector<float> x{0.f, 1.f, 2.f}, y{0.f, 2.f};
  std::vector<double> xd{0., 1., 2.}, yd{0., 2.};
  auto const msm = r::measures::msm(1e39);
  EXPECT_ERROR(r::value(msm, r::view(x), r::view(y)), "msm c must be finite in the value type", "got 9.99");
  CHECK(r::value(msm, r::view(xd), r::view(yd)) == 1e39);  // in double it is finite
  auto const warp = r::with_warp_penalty(r::measures::soft_dtw(1.0f), 1e39);
  EXPECT_ERROR(r::value(warp, r::view(x), r::view(y)), "warp penalty must be finite in the value type");
  // soft-MSM's cost parameters in double on float series (the parameter type is its own)
  using float_soft_msm = r::measure<r::soft_msm_cost<double>, r::soft_min<float>>;
  float_soft_msm const big_c{{1e39, 1.0, 1e-9}, {1.0f}, {}, false};
  std::vector<float> gx(3), gy(2);
  EXPECT_ERROR(r::value_and_grad(big_c, r::view(x), r::view(y), r::view(gx), r::view(gy)), "soft-msm c and eps");
  float_soft_msm const sub_gamma{{1.0, 1e-40, 1e-9}, {1.0f}, {}, false};  // normal in double only
  EXPECT_ERROR(r::value(sub_gamma, r::view(x), r::view(y)), "soft-msm cost gamma must be 0, or normal");
  float_soft_msm const zero_gamma{{1.0, 1e-46, 1e-9}, {1.0f}, {}, false};  // 0 in float: the hard min
  EXPECT_ERROR(r::value(zero_gamma, r::view(x), r::view(y)), "soft-msm cost gamma must be 0, or normal");
  CHECK(std::isfinite(r::value(float_soft_msm{{1.0, 1.0, 1e-9}, {1.0f}, {}, false}, r::view(x), r::view(y))));
}

TEST_CASE("NaN or inf in the input", "[errors]") {
  auto const m = r::measures::soft_dtw(1.0);
  std::vector<double> good{1, 2, 3, 4}, gx(4), gy(4);
  std::vector<double> bad_nan{1, 2, nan_v, 4}, bad_inf{1, -inf_v, 3, 4};
  EXPECT_ERROR(r::value(m, r::view(bad_nan), r::view(good)), "x", "nan", "2");      // sample 2
  EXPECT_ERROR(r::value(m, r::view(good), r::view(bad_inf)), "y", "inf", "1");      // sample 1
  EXPECT_ERROR(r::value_and_grad(m, r::view(bad_nan), r::view(good), r::view(gx), r::view(gy)), "x", "nan");
  EXPECT_ERROR(r::value(r::measures::dtw(), r::view(good), r::view(bad_nan)), "y", "nan");
  std::vector<float> fgood{1, 2}, fbad{std::numeric_limits<float>::infinity(), 2};
  EXPECT_ERROR(r::value(r::measures::soft_dtw(1.0f), r::view(fbad), r::view(fgood)), "x", "inf");
  // Multichannel: the message names sample and channel.
  std::vector<double> mc{1, 2, 3, 4, 5, nan_v};
  std::vector<double> mc_good(6, 0.0);
  EXPECT_ERROR(r::value(m, r::view(mc, 2), r::view(mc_good, 2)), "x", "nan", "sample 2", "channel 1");
  // In a batch: the message names the batch and the series.
  std::vector<double> xs{1, 2, 3, 4, nan_v, 6}, ys(6, 0.0), out(2);
  auto const X = r::make_batch(xs, 2, 3);
  auto const Y = r::make_batch(ys, 2, 3);
  EXPECT_ERROR(r::values(r::host, m, X, Y, std::span<double>(out)), "X", "nan", "series 1");
  EXPECT_ERROR(r::values(r::host, m, Y, X, std::span<double>(out)), "Y", "nan", "series 1");
  // NaN in the padding of a ragged batch is not part of the data: accepted.
  std::vector<r::index_t> const lens{3, 1};
  auto const Xr = r::make_batch(xs, 2, 3, 1, std::span<r::index_t const>(lens));
  CHECK_NOTHROW(r::values(r::host, m, Xr, Y, std::span<double>(out)));
  CHECK(std::isfinite(out[0]));
  CHECK(std::isfinite(out[1]));
}

TEST_CASE("negative band radius, negative or non-finite window", "[errors]") {
  EXPECT_ERROR(r::band_spec::radius(-1), "band radius", "got -1");
  EXPECT_ERROR(r::band_spec::radius(-42), "band radius", "-42");
  EXPECT_ERROR(r::band_spec::window(-0.5), "window", "got -0.5");
  EXPECT_ERROR(r::band_spec::window(nan_v), "window", "got nan");
  EXPECT_ERROR(r::band_spec::window(inf_v), "window", "got inf");
}

TEST_CASE("batch shape: lengths array, lengths beyond max_length or 0, data size", "[errors]") {
  std::vector<double> data(3 * 4 * 2, 0.5);
  std::vector<r::index_t> const two{4, 4}, four{4, 4, 4, 4};
  EXPECT_ERROR(r::make_batch(data, 3, 4, 2, std::span<r::index_t const>(two)), "lengths", "2", "3");
  EXPECT_ERROR(r::make_batch(data, 3, 4, 2, std::span<r::index_t const>(four)), "lengths", "4", "3");
  std::vector<r::index_t> const too_long{4, 5, 1}, zero{4, 0, 1}, negative{-2, 1, 1};
  EXPECT_ERROR(r::make_batch(data, 3, 4, 2, std::span<r::index_t const>(too_long)), "lengths[1]", "5", "4");
  EXPECT_ERROR(r::make_batch(data, 3, 4, 2, std::span<r::index_t const>(zero)), "lengths[1]", "got 0");
  EXPECT_ERROR(r::make_batch(data, 3, 4, 2, std::span<r::index_t const>(negative)), "lengths[0]", "got -2");
  EXPECT_ERROR(r::make_batch(data, 3, 5, 2), "data", "24", "30");
  EXPECT_ERROR(r::make_batch(data, 4, 4, 2), "data", "24", "32");
  EXPECT_ERROR(r::make_batch(data, -1, 4, 2), "batch", "got -1");
  EXPECT_ERROR(r::make_batch(data, 3, 0, 2), "max_length", "got 0");
  EXPECT_ERROR(r::make_batch(data, 3, 4, 0), "channels", "got 0");
  // batch * max_length * channels must not wrap around (2^32 * 2^32 = 2^64 wrapped to 0 and an
  // empty buffer matched)
  std::vector<double> none;
  EXPECT_ERROR(r::make_batch(none, r::index_t(1) << 32, r::index_t(1) << 32), "overflows");
  EXPECT_ERROR(r::make_batch(none, 3, r::index_t(1) << 62, 4), "overflows");

  // A hand-built view with lengths beyond the data is caught at the call.
  auto const m = r::measures::soft_dtw(1.0);
  std::vector<r::index_t> const bad{4, 9, 2};
  r::batch_view<double const> const X{data.data(), 3, 4, 2, bad.data()};
  auto const Y = r::make_batch(std::span<double const>(data), 3, 4, 2);
  std::vector<double> out(3), D(9), gx(data.size()), gy(data.size());
  EXPECT_ERROR(r::values(r::host, m, X, Y, std::span<double>(out)), "X", "series 1", "9", "4");
  EXPECT_ERROR(r::pairwise(r::host, m, Y, X, r::matrix_view<double>{D.data(), 3, 3}), "Y", "series 1", "9");
  EXPECT_ERROR(r::values_and_grads(r::host, m, X, Y, std::span<double>(out), r::make_batch(gx, 3, 4, 2),
                                   r::make_batch(gy, 3, 4, 2)),
               "X", "series 1", "9");
  std::vector<r::index_t> const zero2{4, 0, 2};
  r::batch_view<double const> const X0{data.data(), 3, 4, 2, zero2.data()};
  EXPECT_ERROR(r::values(r::host, m, X0, Y, std::span<double>(out)), "X", "series 1", "got 0");
  // null data for a non-empty batch (it crashed while the values were checked)
  r::batch_view<double const> const Xnull{nullptr, 2, 3, 1, nullptr};
  EXPECT_ERROR(r::values(r::host, m, Xnull, Xnull, std::span<double>(out.data(), 2)), "X", "null");
}

TEST_CASE("outputs that overlap the inputs or each other are refused", "[errors]") {
  // they gave wrong numbers: gx = x zeroed x before the recursion read it, gx = gy returned the
  // sum of two different series' gradients, out = X overwrote later pairs' inputs
  auto const m = r::measures::soft_dtw(1.0);
  std::vector<double> x{0.1, 0.7, -0.3}, y{0.5, -0.2, 0.4, 0.9}, gx(3), gy(4);
  EXPECT_ERROR(r::value_and_grad(m, r::view(x), r::view(y), r::view(x), r::view(gy)), "gx", "overlaps", "x");
  // a null gradient is named as such (it said "must have the shape of x (3, 1), got (3, 1)")
  EXPECT_ERROR(r::value_and_grad(m, r::view(x), r::view(y), r::series_view<double>{nullptr, 3, 1}, r::view(gy)),
               "gx is null");
  std::vector<double> both(4);
  EXPECT_ERROR(r::value_and_grad(m, r::view(x), r::view(y), r::series_view<double>{both.data(), 3, 1},
                                 r::view(both)),
               "gy", "overlaps", "gx");
  std::vector<double> e(12);
  EXPECT_ERROR(r::alignment_matrix(m, r::view(e), r::view(y), r::matrix_view<double>{e.data(), 12, 4}),
               "e", "overlaps", "x");
  // alignment_path wrote its value into x before the traceback read x again: MSM, whose moves
  // cost differently, returned (0,0)(1,0)(2,0)(2,1)(3,2)(4,3) for (0,0)(1,0)(2,1)(3,2)(4,3)
  std::vector<double> xp{2, 0, 1, 4, 2}, yp{0, 2, 3, 0};
  auto const msm = r::measures::msm(0.5);
  EXPECT_ERROR(r::alignment_path(msm, r::view(xp), r::view(yp), &xp[2]), "value_out", "overlaps", "x");
  EXPECT_ERROR(r::alignment_path(msm, r::view(xp), r::view(yp), &yp[0]), "value_out", "overlaps", "y");
  double pv = 0;
  auto const path = r::alignment_path(msm, r::view(xp), r::view(yp), &pv);
  CHECK(path == std::vector<std::array<r::index_t, 2>>{{0, 0}, {1, 0}, {2, 1}, {3, 2}, {4, 3}});
  CHECK(pv == r::value(msm, r::view(xp), r::view(yp)));
  // y = x with one gradient buffer: the derivative of S(x, x) with respect to x
  std::vector<double> g_self(3), g1(3), g2(3);
  double const v_self = r::value_and_grad(m, r::view(x), r::view(x), r::view(g_self), r::view(g_self));
  std::vector<double> const x_copy = x;
  double const v = r::value_and_grad(m, r::view(x), r::view(x_copy), r::view(g1), r::view(g2));
  CHECK(v_self == v);
  for (std::size_t k = 0; k < 3; ++k) CHECK(g_self[k] == Approx(g1[k] + g2[k]).epsilon(1e-14));

  std::vector<double> xs(6, 0.25), ys(6, -0.5), gxs(6), gys(6), out(2), D(4);
  auto const X = r::make_batch(xs, 2, 3), Y = r::make_batch(ys, 2, 3);
  auto const GX = r::make_batch(gxs, 2, 3), GY = r::make_batch(gys, 2, 3);
  EXPECT_ERROR(r::values(r::host, m, X, Y, std::span<double>(xs.data(), 2)), "out", "overlaps", "X");
  EXPECT_ERROR(r::pairwise(r::host, m, X, Y, r::matrix_view<double>{ys.data(), 2, 2}), "out", "overlaps", "Y");
  EXPECT_ERROR(r::values_and_grads(r::host, m, X, Y, std::span<double>(out), r::make_batch(xs, 2, 3), GY),
               "GX", "overlaps", "X");
  EXPECT_ERROR(r::values_and_grads(r::host, m, X, Y, std::span<double>(out), GX, GX), "GY", "overlaps", "GX");
  EXPECT_ERROR(r::values_and_grads(r::host, m, X, Y, std::span<double>(gys.data() + 1, 2), GX, GY),
               "overlaps", "GY");
  EXPECT_ERROR(r::pairwise_grads(r::host, m, X, Y, r::make_batch(ys, 2, 3)), "GX", "overlaps", "Y");
  // X and Y over one buffer with other lengths are other series: one gradient buffer for both
  // summed their gradients (a reviewer's case)
  std::vector<r::index_t> const lx{3, 2}, ly{2, 3};
  r::batch_view<double const> const Xr{xs.data(), 2, 3, 1, lx.data()}, Yr{xs.data(), 2, 3, 1, ly.data()};
  EXPECT_ERROR(r::values_and_grads(r::host, m, Xr, Yr, std::span<double>(out), GX, GX), "GY", "overlaps", "GX");
  // outputs over a per-series lengths array: zeroed GX cleared Y.lengths before the pairs were
  // read (the last pair came out inf)
  {
    std::vector<double> store(6);  // GX's values, the last two holding Y's lengths
    auto* const lengths_in_gx = reinterpret_cast<r::index_t*>(store.data() + 4);
    lengths_in_gx[0] = 3;
    lengths_in_gx[1] = 2;
    r::batch_view<double const> const Yl{ys.data(), 2, 3, 1, lengths_in_gx};
    EXPECT_ERROR(r::values_and_grads(r::host, m, X, Yl, std::span<double>(out), r::batch_view<double>{store.data(), 2, 3, 1},
                                     r::batch_view<double>{gys.data(), 2, 3, 1, lengths_in_gx}),
                 "GX", "overlaps", "Y.lengths");
    std::vector<r::index_t> lengths_buffer{3, 2};
    r::batch_view<double const> const Xl{xs.data(), 2, 3, 1, lengths_buffer.data()};
    EXPECT_ERROR(r::values(r::host, m, Xl, Y, std::span<double>(reinterpret_cast<double*>(lengths_buffer.data()), 2)),
                 "out", "overlaps", "X.lengths");
    r::batch_view<double const> const Xg{xs.data(), 2, 3, 1, lengths_in_gx};
    EXPECT_ERROR(r::pairwise(r::host, m, Xg, Y, r::matrix_view<double>{store.data() + 2, 2, 2}), "out", "overlaps",
                 "X.lengths");
  }
  // non-finite upstream gradients and weights (they made every gradient NaN)
  std::vector<double> const up{1.0, nan_v}, w{1.0, 2.0, inf_v, 0.5};
  EXPECT_ERROR(r::values_and_grads(r::host, m, X, Y, std::span<double>(out), GX, GY,
                                   std::span<double const>(up)),
               "upstream[1]", "not finite");
  EXPECT_ERROR(r::pairwise_grads(r::host, m, X, Y, GX, r::matrix_view<double>{D.data(), 2, 2},
                                 r::matrix_view<double const>{w.data(), 2, 2}),
               "weights(1, 0)", "not finite");
}

TEST_CASE("output and gradient shape mismatch", "[errors]") {
  auto const m = r::measures::soft_dtw(1.0);
  std::vector<double> x(6, 0.1), y(8, 0.2), gx(6), gy(8), g_short(4);
  // Single pair (x: 3 x 2, y: 4 x 2).
  EXPECT_ERROR(r::value_and_grad(m, r::view(x, 2), r::view(y, 2), r::view(g_short, 2), r::view(gy, 2)), "gx", "(3, 2)", "(2, 2)");
  EXPECT_ERROR(r::value_and_grad(m, r::view(x, 2), r::view(y, 2), r::view(gx, 2), r::view(gx, 2)), "gy", "(4, 2)", "(3, 2)");
  EXPECT_ERROR(r::value_and_grad(m, r::view(x, 2), r::view(y, 2), r::view(gx, 1), r::view(gy, 2)), "gx", "(6, 1)");
  std::vector<double> E(12);
  EXPECT_ERROR(r::alignment_matrix(m, r::view(x, 2), r::view(y, 2), r::matrix_view<double>{E.data(), 4, 3}), "e", "(3, 4)", "(4, 3)");
  EXPECT_ERROR(r::alignment_matrix(r::measures::soft_dtw_divergence(1.0), r::view(x, 2), r::view(y, 2),
                                   r::matrix_view<double>{E.data(), 3, 4}), "divergence");

  // Batches.
  std::vector<double> xs(3 * 4, 0.1), ys(3 * 5, 0.2), out2(2), out3(3), gxs(xs.size()), gys(ys.size()), D(9);
  auto const X = r::make_batch(xs, 3, 4);
  auto const Y = r::make_batch(ys, 3, 5);
  EXPECT_ERROR(r::values(r::host, m, X, Y, std::span<double>(out2)), "out", "2", "3");
  std::vector<double> ys2(2 * 5);
  EXPECT_ERROR(r::values(r::host, m, X, r::make_batch(ys2, 2, 5), std::span<double>(out3)), "series", "3", "2");
  EXPECT_ERROR(r::values_and_grads(r::host, m, X, Y, std::span<double>(out3), r::make_batch(gys, 3, 5),
                                   r::make_batch(gys, 3, 5)),
               "GX", "(3, 4, 1)", "(3, 5, 1)");
  EXPECT_ERROR(r::values_and_grads(r::host, m, X, Y, std::span<double>(out3), r::make_batch(gxs, 3, 4),
                                   r::make_batch(gxs, 3, 4)),
               "GY", "(3, 5, 1)", "(3, 4, 1)");
  std::vector<double> const up2(2, 1.0);
  EXPECT_ERROR(r::values_and_grads(r::host, m, X, Y, std::span<double>(out3), r::make_batch(gxs, 3, 4),
                                   r::make_batch(gys, 3, 5), std::span<double const>(up2)),
               "upstream", "2", "3");
  EXPECT_ERROR(r::pairwise(r::host, m, X, Y, r::matrix_view<double>{D.data(), 3, 2}), "out", "(3, 3)", "(3, 2)");
  EXPECT_ERROR(r::pairwise_grads(r::host, m, X, Y, r::make_batch(gys, 3, 5)), "GX", "(3, 4, 1)");
  EXPECT_ERROR(r::pairwise_grads(r::host, m, X, Y, r::make_batch(gxs, 3, 4), r::matrix_view<double>{D.data(), 2, 3}),
               "out", "(3, 3)", "(2, 3)");
  EXPECT_ERROR(r::pairwise_grads(r::host, m, X, Y, r::make_batch(gxs, 3, 4), {},
                                 r::matrix_view<double const>{D.data(), 3, 1}),
               "weights", "(3, 3)", "(3, 1)");
  EXPECT_ERROR(r::host.with_threads(-2), "threads", "got -2");
}
