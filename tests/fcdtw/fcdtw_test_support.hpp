#pragma once
// Shared by the FastCDTW host tests: random PL series on uniform or random knot grids, and two
// independent oracles of F: dense midpoint quadrature and a sorted-union closed form (with the
// option to drop the warp knots, to show that they are needed).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
#include <resilin/fcdtw/interpolant.hpp>
#include <resilin/fcdtw/objective.hpp>
#include <resilin/fcdtw/warp.hpp>
#include "host/helpers.hpp"

namespace fcdtw_test {
using resilin::index_t;
using namespace resilin::fcdtw;

/// A series with owned samples (length, channels) and knots (empty: uniform linspace).
struct pl_series {
  std::vector<double> values;
  std::vector<double> knots;
  index_t channels = 1;

  index_t length() const { return static_cast<index_t>(values.size()) / channels; }
  interpolant<double> view() const {
    resilin::series_view<double const> const s{values.data(), length(), channels};
    return knots.empty() ? uniform_interpolant(s) : knotted_interpolant(s, knots.data());
  }
};

/// n sorted knots from 0 to 1 with random positive gaps (ratio up to 5).
inline std::vector<double> random_knots(index_t n, std::uint64_t seed) {
  auto const g = resilin_test::random_values(static_cast<std::size_t>(n), seed, 0.2, 1.0);
  std::vector<double> t(static_cast<std::size_t>(n), 0.0);
  for (std::size_t i = 1; i < t.size(); ++i) t[i] = t[i - 1] + g[i];
  for (auto& e : t) e /= t.back();
  t.back() = 1.0;
  return t;
}

inline pl_series random_series(index_t n, index_t d, std::uint64_t seed, bool uniform) {
  pl_series s{resilin_test::random_values(static_cast<std::size_t>(n * d), seed), {}, d};
  if (!uniform) s.knots = random_knots(n, seed + 1000);
  return s;
}

/// Owned warp values and an optional explicit grid.
struct owned_warp {
  std::vector<double> values;
  std::vector<double> grid;  // empty: uniform j / K
  index_t segments() const { return static_cast<index_t>(values.size()) - 1; }
  warp_view<double> view() const {
    return {values.data(), knot_grid<double>{grid.empty() ? nullptr : grid.data(), segments() + 1}};
  }
};

inline owned_warp warp_from(std::vector<double> const& r, warp_map map = warp_map::softplus_cumsum) {
  owned_warp w{std::vector<double>(r.size() + 1), {}};
  warp_from_logits(map, r.data(), static_cast<index_t>(r.size()), w.values.data());
  return w;
}

inline double path_factor(double slope, path_norm norm) {
  return norm == path_norm::l2 ? std::sqrt(1 + slope * slope) : 1 + slope;
}

/// Midpoint quadrature of F with about n nodes, split per warp segment: phi' jumps at the warp
/// knots, so cells must not straddle them (elsewhere the integrand is continuous).
inline double quadrature(pl_series const& x, pl_series const& y, owned_warp const& phi, long n,
                         path_norm norm = path_norm::l2) {
  auto const xi = x.view(), yi = y.view();
  auto const w = phi.view();
  index_t const K = w.segments();
  long const per = std::max(1L, n / long(K));
  std::vector<double> xv(static_cast<std::size_t>(x.channels)), yv(xv.size());
  double sum = 0;
  for (index_t j = 0; j < K; ++j) {
    double const g0 = w.knot(j), h = w.knot(j + 1) - g0;
    double const slope = (w[j + 1] - w[j]) / h, factor = path_factor(slope, norm);
    double part = 0;
    for (long k = 0; k < per; ++k) {
      double const s = (double(k) + 0.5) / double(per);
      double const t = g0 + s * h;
      xi.eval((1 - s) * w[j] + s * w[j + 1], xv.data());
      yi.eval(t, yv.data());
      double d2 = 0;
      for (std::size_t c = 0; c < xv.size(); ++c) d2 += (xv[c] - yv[c]) * (xv[c] - yv[c]);
      part += d2;
    }
    sum += part * factor * h / double(per);
  }
  return sum;
}

/// The closed form by sorting the union of breakpoints (no sweep, no pointers).
inline double sorted_union(pl_series const& x, pl_series const& y, owned_warp const& phi,
                           bool with_warp_knots = true, path_norm norm = path_norm::l2) {
  auto const xi = x.view(), yi = y.view();
  auto const w = phi.view();
  std::vector<double> taus{0.0, 1.0};
  for (index_t m = 0; m < yi.length(); ++m) taus.push_back(yi.knot(m));
  index_t const K = w.segments();
  if (with_warp_knots)
    for (index_t j = 0; j <= K; ++j) taus.push_back(w.knot(j));
  for (index_t i = 0; i < xi.length(); ++i)
    for (index_t j = 0; j < K; ++j) {
      double const t = xi.knot(i), v0 = w[j], v1 = w[j + 1];
      if (v0 < t && t < v1) taus.push_back(w.knot(j) + (w.knot(j + 1) - w.knot(j)) * (t - v0) / (v1 - v0));
    }
  std::sort(taus.begin(), taus.end());
  std::vector<double> a(static_cast<std::size_t>(x.channels)), b(a.size()), xv(a.size()), yv(a.size());
  auto diff = [&](double tau, std::vector<double>& out) {
    double const u = evaluate(w, tau).phi;
    xi.eval(u, xv.data());
    yi.eval(tau, yv.data());
    for (std::size_t c = 0; c < out.size(); ++c) out[c] = xv[c] - yv[c];
    return u;
  };
  double total = 0;
  double u0 = diff(taus[0], a);
  for (std::size_t k = 1; k < taus.size(); ++k) {
    if (taus[k] == taus[k - 1]) continue;
    double const u1 = diff(taus[k], b);
    double const dt = taus[k] - taus[k - 1], du = u1 - u0;
    double const len = norm == path_norm::l2 ? std::sqrt(dt * dt + du * du) : dt + std::abs(du);
    double br = 0;
    for (std::size_t c = 0; c < a.size(); ++c) br += a[c] * a[c] + a[c] * b[c] + b[c] * b[c];
    total += len * br / 3;
    a = b;
    u0 = u1;
  }
  return total;
}

/// |a - b| / max(1e-300, |b|)
inline double rel(double a, double b) { return std::abs(a - b) / std::max(1e-300, std::abs(b)); }

}  // namespace fcdtw_test
