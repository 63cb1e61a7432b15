#pragma once
// FastCDTW's fit started from the grid CDTW alignment (spec/cdtw.md part A: "the grid solution
// is also a natural starting warp for FastCDTW", B.3.8's solver "from the identity or from the
// grid CDTW alignment"). The optimal lattice path of hard grid CDTW between x and y (the
// recursion with cdtw_cost, which takes the samples as equally spaced) is drawn through the
// points (t_y[j], t_x[i]) of the series' knots and read as a warp of x onto y's axis: at each
// warp knot t the path covers an interval of x's time (one point, or a vertical climb), and the
// warp takes its midpoint. Host only: the path costs O(n m) time and memory per pair.
#include <algorithm>
#include <array>
#include <span>
#include <vector>
#include <resilin/alignment.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/fcdtw/interpolant.hpp>
#include <resilin/fcdtw/warp.hpp>

namespace resilin::fcdtw {

/// The knots v (K + 1, on the uniform grid k / K) of the warp that follows a lattice path
/// [(0, 0), ..., (n - 1, m - 1)] (i indexes x's samples, j y's; each step moves i, j or both
/// by one) drawn through the points (y.knot(j), x.knot(i)): v_k is the midpoint of the path's
/// x-times at t = k / K. Monotone, v_0 = 0, v_K = 1.
template <class T>
void warp_knots_from_path(std::span<std::array<index_t, 2> const> path, interpolant<T> const& x,
                          interpolant<T> const& y, index_t K, T* v) {
  auto const L = static_cast<index_t>(path.size());
  auto const t = [&](index_t a) { return y.knot(path[static_cast<std::size_t>(a)][1]); };
  auto const u = [&](index_t a) { return x.knot(path[static_cast<std::size_t>(a)][0]); };
  warp_view<T> const grid = uniform_warp<T>(v, K);  // its knots only
  index_t a = 0;
  for (index_t k = 0; k <= K; ++k) {
    T const g = grid.knot(k);
    while (a + 1 < L && t(a) < g) ++a;  // the first point at or after g (the last one is at 1)
    T value;
    if (t(a) > g && a > 0) {  // g inside a step that moves t: one point of the path
      T const w = (g - t(a - 1)) / (t(a) - t(a - 1));
      value = u(a - 1) + w * (u(a) - u(a - 1));
    } else {  // points at t = g: the middle of the climb from the first to the last
      index_t b = a;
      while (b + 1 < L && t(b + 1) == g) ++b;
      value = (u(a) + u(b)) / T(2);
    }
    v[k] = value < T(0) ? T(0) : (value > T(1) ? T(1) : value);
  }
  v[0] = T(0);
  v[K] = T(1);
}

/// The least slope of a grid start's warp, relative to the identity's: a flat stretch of the
/// path (x's time standing still) gets this slope instead of 0. Taken flat (logits_from_knots
/// gives a flat increment a logit near -68), a segment's logit had a gradient near 3e-30, far
/// below Adam's eps, and never moved: such fits kept their start's value for any budget, above
/// the identity start's after 300 steps in some pairs. Nearly flat is no better: from slopes of
/// 1e-3 and 1e-2 (logits near -7.3 and -5) the fits were ill-conditioned, a barycentre's loss
/// moving by 1e-4 relative after four rounds for series changed by 1e-13; from 0.1 (logit near
/// -2.6) by 1e-13, as from the identity.
inline constexpr double grid_start_min_slope = 0.1;

/// The initial logits r (K) of a fit of x onto y's axis that starts at the hard grid CDTW
/// alignment of x and y: warp_knots_from_path() of the optimal lattice path, its increments
/// raised to grid_start_min_slope / K, each increment's logit (logits_from_knots' map). The
/// increments are raised and scaled in double, not rebuilt as knots: in float, knots near 1
/// have no room for increments of 1e-3 / K once K passes about 16800, and such stretches came
/// out flat again.
template <class T>
void grid_start_logits(warp_map map, interpolant<T> const& x, interpolant<T> const& y, index_t K,
                       T* r) {
  detail::require_no_error(detail::option_error(map));
  auto const path = alignment_path(measures::cdtw(), x.values, y.values);
  std::vector<T> v(static_cast<std::size_t>(K + 1));
  warp_knots_from_path<T>(path, x, y, K, v.data());
  std::vector<double> p(static_cast<std::size_t>(K));
  double const least = grid_start_min_slope / static_cast<double>(K);
  double total = 0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    p[k] = std::max(static_cast<double>(v[k + 1]) - static_cast<double>(v[k]), least);
    total += p[k];
  }
  for (std::size_t k = 0; k < p.size(); ++k)
    r[k] = detail::logit_of_increment(map, static_cast<T>(p[k] / total * static_cast<double>(K)));
}

}  // namespace resilin::fcdtw
