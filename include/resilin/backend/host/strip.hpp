#pragma once
// The host traversal of one pair: a strip wavefront. A strip is W consecutive rows (W = SIMD
// lanes); lane k works on row i0 + k and at step t computes column t - k, so the lanes sit on
// one anti-diagonal of the strip and each needs only values its neighbour lane produced one or
// two steps before (a lane shift) or the row above the strip (a rolling row buffer). One
// traversal serves every length, band and batch shape, with full SIMD width even for a single
// pair. Forward value only keeps O(m) memory; the training forward stores R in the same skewed
// layout (one value per cell of the band, plus W - 1 per strip), which the backward reads.
#include <algorithm>
#include <vector>
#include <resilin/backend/host/simd.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/core/views.hpp>

namespace resilin::host_detail {

template <class T, class Cost, class Smooth>
struct pair_problem {
  Cost cost;
  Smooth smooth;
  series_view<T const> x;
  series_view<T const> y;
  band_geometry band;
};

/// Per-strip lane geometry: lane k is in the band at step t iff start[k] <= t <= end[k].
template <class T>
struct strip_lanes {
  static constexpr int W = simd::lanes<T>;
  index_t start[W];
  index_t end[W];
  index_t t0 = 0, t1 = -1;

  template <class Problem>
  strip_lanes(Problem const& p, index_t i0) noexcept {
    index_t const n = p.x.length;
    for (int k = 0; k < W; ++k) {
      index_t const i = i0 + k;
      if (i < n) {
        index_range const r = p.band.row(i);
        start[k] = r.lo + k;
        end[k] = r.hi + k;
        t1 = std::max(t1, end[k]);
      } else {
        start[k] = 1;
        end[k] = 0;
      }
    }
    t0 = start[0];
  }
  bool in_band(int k, index_t t) const noexcept { return start[k] <= t && t <= end[k]; }
};

/// The step costs of the W lanes at step t (0 for lanes outside the band).
template <class T, class P>
RESILIN_INLINE step3<simd::pack<T>> lane_costs(P const& p, strip_lanes<T> const& lanes,
                                               index_t i0, index_t t,
                                               typename simd::pack<T>::mask& inside) noexcept {
  constexpr int W = simd::lanes<T>;
  alignas(64) T cd[W], cu[W], cl[W];
  alignas(64) typename simd::pack<T>::int_type in[W];
  for (int k = 0; k < W; ++k) {
    if (lanes.in_band(k, t)) {
      step3<T> const c = p.cost.step(p.x, p.y, i0 + k, t - k);
      cd[k] = c.diag;
      cu[k] = c.up;
      cl[k] = c.left;
      in[k] = -1;
    } else {
      cd[k] = cu[k] = cl[k] = T(0);
      in[k] = 0;
    }
  }
  std::memcpy(&inside, in, sizeof inside);
  return {simd::pack<T>::load(cd), simd::pack<T>::load(cu), simd::pack<T>::load(cl)};
}

/// R in the strip-skewed layout: strip s holds steps [t0, t1] of W lanes contiguously.
template <class T>
struct strip_table {
  using V = simd::pack<T>;
  static constexpr int W = V::width;
  std::vector<V> cells;
  std::vector<index_t> offset, t0, t1;

  void reset(index_t strips) {
    cells.clear();
    offset.assign(static_cast<std::size_t>(strips), 0);
    t0.assign(static_cast<std::size_t>(strips), 0);
    t1.assign(static_cast<std::size_t>(strips), -1);
  }
  /// R(i, j); +inf outside the stored steps (out of band); R(-1, -1) = 0.
  T at(index_t i, index_t j) const noexcept {
    if (i < 0) return j == -1 ? T(0) : math::infinity<T>();
    index_t const s = i / W;
    int const k = static_cast<int>(i % W);
    index_t const t = j + k;
    auto const su = static_cast<std::size_t>(s);
    if (t < t0[su] || t > t1[su]) return math::infinity<T>();
    return cells[static_cast<std::size_t>(offset[su] + t - t0[su])][k];
  }
  V step(index_t s, index_t t) const noexcept {
    auto const su = static_cast<std::size_t>(s);
    if (t < t0[su] || t > t1[su]) return V(math::infinity<T>());
    return cells[static_cast<std::size_t>(offset[su] + t - t0[su])];
  }
};

/// Forward sweep. Returns R(n-1, m-1). `rowbuf` needs m + W + 1 values. With a table, stores
/// every computed step for the backward pass.
template <class T, class P>
T forward(P const& p, std::vector<T>& rowbuf, strip_table<T>* table) {
  using V = simd::pack<T>;
  constexpr int W = V::width;
  index_t const n = p.x.length, m = p.y.length;
  T const inf = math::infinity<T>();
  rowbuf.assign(static_cast<std::size_t>(m + W + 1), inf);  // rowbuf[j + 1] = R(i0 - 1, j)
  rowbuf[0] = T(0);                                          // the virtual origin R(-1, -1)
  index_t const strips = (n + W - 1) / W;
  if (table) table->reset(strips);
  T result = inf;
  index_t const last_lane = (n - 1) % W, last_strip = (n - 1) / W;
  for (index_t s = 0; s < strips; ++s) {
    index_t const i0 = s * W;
    strip_lanes<T> const lanes(p, i0);
    if (table) {
      auto const su = static_cast<std::size_t>(s);
      table->offset[su] = static_cast<index_t>(table->cells.size());
      table->t0[su] = lanes.t0;
      table->t1[su] = lanes.t1;
      table->cells.resize(table->cells.size() + static_cast<std::size_t>(lanes.t1 - lanes.t0 + 1));
    }
    V* out = table ? table->cells.data() + table->offset[static_cast<std::size_t>(s)] : nullptr;
    V cur(inf), prev(inf);
    for (index_t t = lanes.t0; t <= lanes.t1; ++t) {
      V const up = simd::shift_in_front(cur, rowbuf[static_cast<std::size_t>(t + 1)]);
      V const diag = simd::shift_in_front(prev, rowbuf[static_cast<std::size_t>(t)]);
      typename V::mask inside;
      step3<V> const c = lane_costs(p, lanes, i0, t, inside);
      V const val = simd::select(inside, cell_value(p.smooth, c, diag, up, cur), V(inf));
      if (out) out[t - lanes.t0] = val;
      index_t const jl = t - (W - 1);  // the strip's last row writes the buffer for the next
      if (jl >= -1) rowbuf[static_cast<std::size_t>(jl + 1)] = val[W - 1];
      prev = cur;
      cur = val;
    }
    // R(n-1, m-1) is lane last_lane at step m-1+last_lane, the strip's last step.
    if (s == last_strip) result = cur[static_cast<int>(last_lane)];
  }
  return result;
}

/// Backward sweep over a stored table. Calls sink(i, j, A, G) for every in-band cell, where
/// A = dR(n-1,m-1)/dR(i,j) times `seed` and G = A * weights (the expected use of each move).
template <class T, class P, class Sink>
void backward(P const& p, strip_table<T> const& table, T seed, std::vector<T>& g_up,
              std::vector<T>& g_diag, Sink&& sink) {
  using V = simd::pack<T>;
  constexpr int W = V::width;
  index_t const n = p.x.length, m = p.y.length;
  // g_up[j + W] = G.up(i0 + W, j), g_diag[j + W] = G.diag(i0 + W, j): the row below the strip.
  g_up.assign(static_cast<std::size_t>(m + 2 * W + 2), T(0));
  g_diag.assign(static_cast<std::size_t>(m + 2 * W + 2), T(0));
  index_t const strips = (n + W - 1) / W;
  for (index_t s = strips - 1; s >= 0; --s) {
    index_t const i0 = s * W;
    strip_lanes<T> const lanes(p, i0);
    index_t const seed_t = (n - 1 - i0 < W) ? (m - 1) + (n - 1 - i0) : -1;
    int const seed_lane = static_cast<int>(n - 1 - i0);
    V g_up_1(T(0)), g_left_1(T(0)), g_diag_1(T(0)), g_diag_2(T(0));  // G at steps t+1, t+2
    for (index_t t = lanes.t1; t >= lanes.t0; --t) {
      auto const col = [&](index_t j) { return static_cast<std::size_t>(j + W); };
      V a = simd::shift_in_back(g_up_1, g_up[col(t - W + 1)]) + g_left_1 +
            simd::shift_in_back(g_diag_2, g_diag[col(t - W + 2)]);
      if (t == seed_t) a.set(seed_lane, a[seed_lane] + seed);
      // predecessors: own lane at t-1 (left); lane above at t-1 (up) and t-2 (diag)
      V const r1 = table.step(s, t - 1), r2 = table.step(s, t - 2);
      V const r_left = r1;
      V const r_up = simd::shift_in_front(r1, table.at(i0 - 1, t));
      V const r_diag = simd::shift_in_front(r2, table.at(i0 - 1, t - 1));
      typename V::mask inside;
      step3<V> const c = lane_costs(p, lanes, i0, t, inside);
      step3<V> const w = cell_weights(p.smooth, c, r_diag, r_up, r_left);
      V const zero(T(0));
      a = simd::select(inside, a, zero);
      step3<V> const g{simd::select(inside, a * w.diag, zero), simd::select(inside, a * w.up, zero),
                       simd::select(inside, a * w.left, zero)};
      for (int k = 0; k < W; ++k) {
        if (lanes.in_band(k, t))
          sink(i0 + k, t - k, a[k], step3<T>{g.diag[k], g.up[k], g.left[k]});
      }
      g_up[col(t)] = g.up[0];
      g_diag[col(t)] = g.diag[0];
      g_diag_2 = g_diag_1;
      g_diag_1 = g.diag;
      g_up_1 = g.up;
      g_left_1 = g.left;
    }
  }
}

}  // namespace resilin::host_detail
