#pragma once
// Bands that hold one path (band_geometry::single_path(): n = 1, m = 1, a radius-0 band with
// n = m): every cell has at most one finite candidate, of which the soft-min and the min are that
// candidate exactly, so S is the sum of the path's step costs and its gradient the sum of their
// partials. A scalar walk over the band's cells gives both, for values and gradients alike (so
// value() and value_and_grad() keep one value's bits; batches and the alignment passes take its
// value too). The strips spent a whole vector of lanes per real cell there: soft-DTW value+grad
// at n = 10^5, m = 1 took 202 ns per cell (now 15.6), at radius 0 with n = m = 10^5 542 (now 27.5).
#include <array>
#include <cstdint>
#include <type_traits>
#include <vector>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/views.hpp>
#include <resilin/smoothing/hard_min.hpp>
#include <resilin/smoothing/soft_min.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Whether the walk gives the smoothing's value: the soft-min and the min of one finite
/// candidate are that candidate (a user's smoothing need not be).
template <class Smooth>
inline constexpr bool walks_single_path = std::is_same_v<Smooth, hard_min> || is_soft_min_v<Smooth>;

/// The walk's memory: R (then the adjoints) of the previous and the current row's band cells,
/// and every cell's move, row after row (0 diagonal, 1 up, 2 left, 3 none: unreachable).
template <class T>
struct single_path_workspace {
  std::vector<T> above, here;
  std::vector<std::uint8_t> moves;
};

/// The cost of the one move into (i, j): for the MSM family only that move's channel sum (as
/// msm_step adds it: the transitions are the dear part), else that entry of cost.step. (These
/// may round differently from the strips' lanes, where the compiler contracts differently: every
/// value of a single-path pair comes from the walk.)
template <class T, class Cost>
T single_move_cost(Cost const& cost, series_view<T const> x, series_view<T const> y, index_t i, index_t j,
                   int move) noexcept {
  if constexpr (requires(T a) { cost.move(a, a); cost.transition(a, a, a); }) {
    T const* xi = x.row(i);
    T const* yj = y.row(j);
    T sum = T(0);
    for (index_t k = 0; k < x.channels; ++k) {
      if (move == 0) sum += cost.move(xi[k], yj[k]);
      else if (move == 1) sum += cost.transition(xi[k], x.row(i - 1)[k], yj[k]);
      else sum += cost.transition(yj[k], y.row(j - 1)[k], xi[k]);
    }
    return sum;
  } else {
    step3<T> const c = cost.step(x, y, i, j);
    return move == 0 ? c.diag : move == 1 ? c.up : c.left;
  }
}

/// S(x, y) on a band that holds one path (band.single_path()); with `grad`, also adds seed dS/dx
/// to gx and seed dS/dy to gy (gx and gy may be one buffer for y = x). +inf where the band does
/// not reach (n-1, m-1), with no gradient.
template <class T, class Cost>
T single_path_walk(Cost const& cost, band_geometry const& band, series_view<T const> x,
                   series_view<T const> y, bool grad, series_view<T> gx, series_view<T> gy, T seed,
                   single_path_workspace<T>& ws) {
  T const inf = math::infinity<T>();
  index_t const n = x.length, m = y.length;
  // a column (m = 1), a row (n = 1) or the diagonal of a radius-0 band (n = m): the path's cells
  // and moves are known, without the rows' bookkeeping (a batch of 64 x 1 DTW pairs took 5.8 ns
  // per cell with it, 1.8 in the lock-step groups before they left such pairs to the walk). The
  // rows below serve the other bands of one path (an Itakura slope of 1).
  int const line = m == 1 ? 1 : n == 1 ? 2 : (band.banded() && !band.itakura() && band.half_width == 0) ? 0 : -1;
  if (line >= 0) {
    index_t const length = n > m ? n : m;
    auto const at = [line](index_t k) {  // (i, j) of the path's k-th cell
      return line == 1 ? std::array<index_t, 2>{k, 0} : line == 2 ? std::array<index_t, 2>{0, k} : std::array<index_t, 2>{k, k};
    };
    T value = T(0);  // R(-1, -1)
    for (index_t k = 0; k < length; ++k) {
      auto const [i, j] = at(k);
      value = value + single_move_cost(cost, x, y, i, j, k == 0 ? 0 : line);
    }
    if (!grad || !(value < inf)) return value;
    for (index_t k = length - 1; k >= 0; --k) {  // last cell first, as the rows' backward
      auto const [i, j] = at(k);
      int const move = k == 0 ? 0 : line;
      cost.step_grad(x, y, i, j, step3<T>{move == 0 ? seed : T(0), move == 1 ? seed : T(0), move == 2 ? seed : T(0)}, gx, gy);
    }
    return value;
  }
  ws.moves.clear();
  index_range above{0, -1};
  ws.above.clear();
  for (index_t i = 0; i < n; ++i) {
    index_range const r = band.row(i);
    // value only, the last row: its cells one after the other, none kept (a 1 x m pair in O(1))
    bool const keep = grad || i + 1 < n;
    if (keep) ws.here.resize(static_cast<std::size_t>(r.size()));  // every cell is written below
    auto const prev = [&](index_t j) { return above.contains(j) ? ws.above[static_cast<std::size_t>(j - above.lo)] : inf; };
    T left = inf;  // R(i, j - 1)
    for (index_t j = r.lo; j <= r.hi; ++j) {
      T const diag = i == 0 ? (j == 0 ? T(0) : inf) : prev(j - 1);
      T const up = i == 0 ? inf : prev(j);
      int const move = diag < inf ? 0 : up < inf ? 1 : left < inf ? 2 : 3;
      if (grad) ws.moves.push_back(static_cast<std::uint8_t>(move));
      T const from = move == 0 ? diag : move == 1 ? up : left;
      left = move == 3 ? inf : from + single_move_cost(cost, x, y, i, j, move);
      if (keep) ws.here[static_cast<std::size_t>(j - r.lo)] = left;
    }
    if (!keep) return r.hi == m - 1 ? left : inf;
    ws.above.swap(ws.here);
    above = r;
  }
  T const value = above.contains(m - 1) ? ws.above[static_cast<std::size_t>(m - 1 - above.lo)] : inf;
  if (!grad || !(value < inf)) return value;

  // backward, last cell first: each cell's adjoint is final when it is reached (its successors
  // (i, j+1), (i+1, j) and (i+1, j+1) come before it) and goes to its one predecessor
  std::vector<T>& adj = ws.here;   // row i's adjoints
  std::vector<T>& adj_above = ws.above;  // row i-1's
  index_range const last = band.row(n - 1);
  adj.assign(static_cast<std::size_t>(last.size()), T(0));
  adj[static_cast<std::size_t>(m - 1 - last.lo)] = seed;
  std::size_t first = ws.moves.size();  // row i's first move, counted back from the end
  index_range r = last;
  for (index_t i = n - 1; i >= 0; --i) {
    index_range const ra = i > 0 ? band.row(i - 1) : index_range{0, -1};
    adj_above.assign(static_cast<std::size_t>(ra.size()), T(0));
    first -= static_cast<std::size_t>(r.size());
    std::uint8_t const* const mv = ws.moves.data() + first;
    for (index_t j = r.hi; j >= r.lo; --j) {
      T const e = adj[static_cast<std::size_t>(j - r.lo)];
      int const move = mv[j - r.lo];
      if (e == T(0) || move == 3) continue;
      step3<T> usage{T(0), T(0), T(0)};
      if (move == 0) usage.diag = e;
      else if (move == 1) usage.up = e;
      else usage.left = e;
      cost.step_grad(x, y, i, j, usage, gx, gy);
      if (move == 0 && i > 0) adj_above[static_cast<std::size_t>(j - 1 - ra.lo)] += e;
      else if (move == 1) adj_above[static_cast<std::size_t>(j - ra.lo)] += e;
      else if (move == 2) adj[static_cast<std::size_t>(j - 1 - r.lo)] += e;
    }
    adj.swap(adj_above);
    r = ra;
  }
  return value;
}

}  // namespace resilin::host_detail
