#pragma once
// What the tests of the second-order passes share (expected_penalty, sharp values): the grid
// of small problems checked against the enumeration of every path, and the check that a
// ragged training batch equals its pairs.
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>
#include <support/catch.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace resilin_test {

/// Every shape up to 4 x 4, one and two channels, no band, radii 0 and 1 and an Itakura band of
/// slope 1.5, at gamma 0.1, 1 and 10: f(gamma, n, m, d, band, x, y) with x, y uniform in
/// [-1.5, 1.5) from consecutive seeds after `seed` (then `seed` moves past them). band_mask()
/// gives each band's reference mask.
inline void for_each_small_problem(
    std::uint64_t& seed,
    std::function<void(double, resilin::index_t, resilin::index_t, resilin::index_t, resilin::band_spec,
                       std::vector<double> const&, std::vector<double> const&)> const& f) {
  for (double gamma : {0.1, 1.0, 10.0})
    for (resilin::index_t n = 1; n <= 4; ++n)
      for (resilin::index_t m = 1; m <= 4; ++m)
        for (resilin::index_t d : {1, 2})
          for (resilin::index_t radius : {-1, 0, 1, -2}) {  // -2: Itakura
            CAPTURE(gamma, n, m, d, radius);
            auto const x = random_values(static_cast<std::size_t>(n * d), ++seed, -1.5, 1.5);
            auto const y = random_values(static_cast<std::size_t>(m * d), ++seed, -1.5, 1.5);
            auto const band = radius == -2  ? resilin::band_spec::itakura(1.5)
                              : radius < 0 ? resilin::band_spec::none()
                                           : resilin::band_spec::radius(radius);
            f(gamma, n, m, d, band, x, y);
          }
}

/// Pairs for the hard measures: generic values both ways round, and small integers, whose
/// equal-cost paths make the hard minimum's ties (diag > up > left) choose the gradient.
inline std::vector<std::pair<std::vector<double>, std::vector<double>>> hard_pairs() {
  std::vector<std::pair<std::vector<double>, std::vector<double>>> pairs{
      {random_values(15, 3, -1, 1), random_values(11, 4, -1, 1)},
      {random_values(11, 4, -1, 1), random_values(15, 3, -1, 1)},
      {{1, 0, 1}, {0, 2, 1, 0}}};
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    auto const rounded = [](std::vector<double> v) {
      for (double& e : v) e = std::floor(3 * e);
      return v;
    };
    pairs.push_back({rounded(random_values(7 + 2 * (seed % 2), 20 + seed, 0, 1)),
                     rounded(random_values(9 - 2 * (seed % 2), 30 + seed, 0, 1))});
  }
  return pairs;
}

/// A training batch call: batch(exec, out, GX, GY, upstream) on fixed X and Y.
using training_batch_call = std::function<void(resilin::host_backend, std::span<double>, resilin::batch_view<double>,
                                               resilin::batch_view<double>, std::span<double const>)>;
/// One pair of it: pair(b, gx, gy) returns the value and writes the gradients.
using training_pair_call = std::function<double(resilin::index_t, resilin::series_view<double>,
                                                resilin::series_view<double>)>;

/// The batch on (xs, ys) equals its pairs bit for bit on one thread and on all, padding gradients
/// are exactly 0, and an upstream factor scales each pair's gradients.
inline void check_batch_equals_pairs(ragged<double> const& xs, ragged<double> const& ys,
                                     training_batch_call const& batch, training_pair_call const& pair) {
  resilin::index_t const B = xs.count, d = xs.channels;
  resilin::index_t const sx = xs.max_length * d, sy = ys.max_length * d;
  auto const upstream = random_values(static_cast<std::size_t>(B), 63, 0.5, 2.0);
  struct result {
    std::vector<double> out, gx, gy;
  };
  auto const run = [&](int threads, std::span<double const> up) {
    result o{std::vector<double>(static_cast<std::size_t>(B)), std::vector<double>(xs.data.size(), 5.0),
             std::vector<double>(ys.data.size(), 5.0)};  // the gradients are overwritten
    batch(resilin::host.with_threads(threads), std::span<double>(o.out),
          resilin::make_batch(o.gx, B, xs.max_length, d, xs.lengths),
          resilin::make_batch(o.gy, B, ys.max_length, d, ys.lengths), up);
    return o;
  };
  result const one = run(1, {}), all = run(0, {}), scaled = run(0, upstream);
  CHECK(bitwise_equal(one.out, all.out));
  CHECK(bitwise_equal(one.out, scaled.out));  // the upstream factor scales the gradients only
  CHECK(bitwise_equal(one.gx, all.gx));
  CHECK(bitwise_equal(one.gy, all.gy));
  auto const at = [](std::vector<double> const& v, resilin::index_t off, resilin::index_t count) {
    return std::vector<double>(v.begin() + off, v.begin() + off + count);
  };
  auto const X = xs.view(), Y = ys.view();
  for (resilin::index_t b = 0; b < B; ++b) {
    CAPTURE(b);
    resilin::index_t const n = X.length(b), m = Y.length(b);
    std::vector<double> gx(static_cast<std::size_t>(n * d)), gy(static_cast<std::size_t>(m * d));
    double const v = pair(b, resilin::series_view<double>{gx.data(), n, d}, resilin::series_view<double>{gy.data(), m, d});
    CHECK(bits_equal(one.out[static_cast<std::size_t>(b)], v));
    CHECK(bitwise_equal(at(one.gx, b * sx, n * d), gx));
    CHECK(bitwise_equal(at(one.gy, b * sy, m * d), gy));
    for (double p : at(one.gx, b * sx + n * d, sx - n * d)) CHECK(p == 0.0);  // padding
    for (double p : at(one.gy, b * sy + m * d, sy - m * d)) CHECK(p == 0.0);
    double const u = upstream[static_cast<std::size_t>(b)];
    for (double& g : gx) g *= u;
    for (double& g : gy) g *= u;
    CHECK(max_rel_diff(at(scaled.gx, b * sx, n * d), gx) <= 1e-14);
    CHECK(max_rel_diff(at(scaled.gy, b * sy, m * d), gy) <= 1e-14);
  }
}

}  // namespace resilin_test
