#pragma once
// DTW and soft-DTW values of many pairs in lock-step: one pair per SIMD lane, G = K * W pairs
// of equal shape traversed together row by row. The strip wavefront (strip.hpp) puts the rows of
// one pair in the lanes and pays a skew of H - 1 steps per strip of H rows, plus lane shifts
// and band masks; for short series that skew is a large share of the work (15 of 79 steps at
// m = 64). Here every lane computes the same cell (i, j) of its own pair: no skew, no shifts,
// no masks, and the K vectors of a cell are independent chains that hide the latency of the
// cell (soft: the exponential-domain cell of exp_domain.hpp; hard: min-plus).
// The arithmetic is the strip forward's, operation for operation (the same point distance
// summed over channels in order, the same cell, the same final conversion), so a pair's
// value does not depend on which traversal ran it: bit for bit equal.
#include <algorithm>
#include <cmath>
#include <map>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>
#include <resilin/backend/host/exp_domain.hpp>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/core/views.hpp>
#include <resilin/cost/dtw.hpp>
#include <resilin/smoothing/hard_min.hpp>
#include <resilin/smoothing/soft_min.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Vectors per lock-step group: K independent cells per step, G = K * W pairs per group.
template <class T>
inline constexpr int lockstep_vectors = 4;
template <class T>
inline constexpr int lockstep_pairs = lockstep_vectors<T> * simd::pack<T>::width;

/// Pairs whose longer series is at most this long go in lock-step: a group's interleaved
/// series and two rows stay within a few MiB. (Measured at (16, 1024, 1024, 8): 217 Mcells/s
/// in lock-step against 187 for the strip traversal; longer single pairs rarely come in groups.)
inline constexpr index_t lockstep_max_length = 4096;

/// The cell of a lock-step group for soft-DTW: the exponential-domain cell of exp_domain.hpp.
template <class T>
struct lockstep_soft_cell {
  using V = simd::pack<T>;
  using state = exp_value<T>;
  T gamma, scale;
  explicit lockstep_soft_cell(soft_min<T> const& s) noexcept
      : gamma(s.gamma), scale(exp_domain_scale<T>(s)) {}
  static state unreachable() noexcept { return {V(T(1)), V(unreachable_k<T>)}; }
  static state origin() noexcept { return {V(T(1)), V(T(0))}; }
  RESILIN_INLINE state operator()(state const& d, state const& u, state const& l, V delta) const noexcept {
    return exp_cell(d, u, l, delta * scale);
  }
  T result(state const& e, int lane) const noexcept {
    return exp_domain_result(gamma, e.m[lane], e.k[lane]);
  }
};

/// The cell of a lock-step group for DTW: the recursion's cell function with hard_min.
template <class T>
struct lockstep_hard_cell {
  using V = simd::pack<T>;
  using state = V;
  explicit lockstep_hard_cell(hard_min const&) noexcept {}
  static state unreachable() noexcept { return V(math::infinity<T>()); }
  static state origin() noexcept { return V(T(0)); }
  RESILIN_INLINE state operator()(V d, V u, V l, V delta) const noexcept {
    return cell_value(hard_min{}, step3<V>{delta, delta, delta}, d, u, l);
  }
  static T result(V const& e, int lane) noexcept { return e[lane]; }
};

/// The lock-step cell of a measure (void: the measure does not run in lock-step). DTW costs
/// with a vector distance, soft (values in the exponential domain) or hard.
template <class T, class Cost, class Smooth>
struct lockstep_cell_for { using type = void; };
template <class T, vector_distance D>
struct lockstep_cell_for<T, dtw_cost<D>, soft_min<T>> { using type = lockstep_soft_cell<T>; };
template <class T, vector_distance D>
struct lockstep_cell_for<T, dtw_cost<D>, hard_min> { using type = lockstep_hard_cell<T>; };

template <class T, class Cost, class Smooth>
inline constexpr bool lockstep_measure =
    !std::is_void_v<typename lockstep_cell_for<T, Cost, Smooth>::type>;

/// Buffers of one worker, reused between groups.
template <class T>
struct lockstep_workspace {
  using V = simd::pack<T>;
  std::vector<V> xs, ys;                    // interleaved: (row, channel, vector), lanes = pairs
  std::vector<exp_value<T>> soft_rows[2];   // (column + 1, vector): the row above and this row
  std::vector<V> hard_rows[2];
  // training (lockstep_training.hpp): every cell's state, the moves' adjoint shares of the row
  // below, and the gradient sums of x's row and of y
  std::vector<exp_value<T>> table;
  std::vector<V> g_up, g_diag, gx_row, gy;

  template <class State>
  std::vector<State>* rows() noexcept {
    if constexpr (std::same_as<State, V>) return hard_rows;
    else return soft_rows;
  }
};

/// Interleaves the G pairs' series into ws.xs and ws.ys: entry (row * d + c) * K + q holds
/// channel c of that row of the pairs q W .. q W + W - 1, one per lane.
template <class T, class Pair>
void interleave_group(Pair const* pairs, lockstep_workspace<T>& ws) {
  constexpr int W = simd::pack<T>::width, K = lockstep_vectors<T>, G = K * W;
  index_t const n = pairs[0].x.length, m = pairs[0].y.length, d = pairs[0].x.channels;
  auto const at = [d](index_t row, index_t c, int q) { return static_cast<std::size_t>((row * d + c) * K + q); };
  ws.xs.resize(static_cast<std::size_t>(n * d * K));
  ws.ys.resize(static_cast<std::size_t>(m * d * K));
  for (int g = 0; g < G; ++g) {
    int const q = g / W, k = g % W;
    for (index_t i = 0; i < n; ++i)
      for (index_t c = 0; c < d; ++c) ws.xs[at(i, c, q)].set(k, pairs[g].x(i, c));
    for (index_t j = 0; j < m; ++j)
      for (index_t c = 0; c < d; ++c) ws.ys[at(j, c, q)].set(k, pairs[g].y(j, c));
  }
}

/// The lock-step forward of an n x m group (series interleaved in ws.xs, ws.ys; d channels):
/// row(i), i >= -1, gives the (m + 1) K states of row i, column j of vector q at (j + 1) K + q,
/// with row(-1) all unreachable but the origin. Rolling rows (Table false): row(i) and
/// row(i - 2) may share storage, and entries past a row's band are never written, since the
/// band's rows only move right. Table (every row its own): entries past the band are set
/// unreachable, so that a backward reads the predecessors of any cell in the band.
template <class T, class Distance, bool Table, class Cell, class Rows>
void lockstep_forward(index_t n, index_t m, index_t d, band_geometry const& band, Cell const& cell,
                      lockstep_workspace<T> const& ws, Rows&& row) {
  using V = simd::pack<T>;
  using S = typename Cell::state;
  constexpr int K = lockstep_vectors<T>;
  S const unreachable = Cell::unreachable();
  V const* const xs = ws.xs.data();
  V const* const ys = ws.ys.data();
  for (index_t i = 0; i < n; ++i) {
    S const* const above = row(i - 1);  // above[(j + 1) * K + q] = R(i - 1, j)
    S* const here = row(i);
    index_range const r = band.row(i);
    // (i, lo - 1) is outside the band; columns before lo - 1 are never read again
    for (int q = 0; q < K; ++q) here[r.lo * K + q] = unreachable;
    if constexpr (Table)
      for (index_t j = r.hi + 1; j < m; ++j)
        for (int q = 0; q < K; ++q) here[(j + 1) * K + q] = unreachable;
    S left[K], diag[K];
    for (int q = 0; q < K; ++q) {
      left[q] = unreachable;
      diag[q] = above[r.lo * K + q];
    }
    V const* const xi = xs + i * d * K;
    for (index_t j = r.lo; j <= r.hi; ++j) {
      V const* const yj = ys + j * d * K;
      S const* const up = above + (j + 1) * K;
      S* const out_j = here + (j + 1) * K;
RESILIN_UNROLL(8)
      for (int q = 0; q < K; ++q) {
        V s(T(0));  // the strip engine's distance, term by term in channel order
RESILIN_UNROLL(4)
        for (index_t c = 0; c < d; ++c) s += Distance::term(xi[c * K + q] - yj[c * K + q]);
        S const u = up[q];
        left[q] = cell(diag[q], u, left[q], s);
        diag[q] = u;
        out_j[q] = left[q];
      }
    }
  }
}

/// S(x_g, y_g) for the G pairs of one group, into out[g]. Every pair has n rows (the longer
/// series, as plain_value orients it) and m columns and the same channel count; band is their
/// common band. Cell: lockstep_soft_cell (every pair satisfies exp_domain_applies) or
/// lockstep_hard_cell.
template <class T, class Distance, class Cell, class Pair>
void lockstep_values(Pair const* pairs, band_geometry const& band, Cell const& cell, T* out,
                     lockstep_workspace<T>& ws) {
  using V = simd::pack<T>;
  using S = typename Cell::state;
  constexpr int W = V::width, K = lockstep_vectors<T>, G = K * W;
  index_t const n = pairs[0].x.length, m = pairs[0].y.length, d = pairs[0].x.channels;
  interleave_group(pairs, ws);
  auto const row_size = static_cast<std::size_t>((m + 1) * K);
  std::vector<S>* const rows = ws.template rows<S>();
  rows[0].assign(row_size, Cell::unreachable());
  rows[1].assign(row_size, Cell::unreachable());
  for (int q = 0; q < K; ++q) rows[0][static_cast<std::size_t>(q)] = Cell::origin();  // R(-1, -1) = 0
  lockstep_forward<T, Distance, false>(n, m, d, band, cell, ws,
                                       [&](index_t i) { return rows[(i + 1) & 1].data(); });
  S const* const last = rows[n & 1].data();  // row n - 1
  for (int g = 0; g < G; ++g) out[g] = cell.result(last[static_cast<std::size_t>(m * K + g / W)], g % W);
}

/// A pair as the host value path orients it: rows along the longer series (x), the rolling
/// row along the shorter one (y). S is symmetric for DTW costs, bit for bit.
template <class T>
struct oriented_pair {
  series_view<T const> x, y;
  static oriented_pair of(series_view<T const> a, series_view<T const> b) noexcept {
    return b.length > a.length ? oriented_pair{b, a} : oriented_pair{a, b};
  }
};

/// Whether a measure's groups also train in lock-step (lockstep_training.hpp): soft-DTW.
template <class T, class Cost, class Smooth>
inline constexpr bool lockstep_trains = lockstep_measure<T, Cost, Smooth> && std::same_as<Smooth, soft_min<T>>;

/// The most a training group keeps of its table of every cell's state (lockstep_training.hpp):
/// 12 MiB, n x m up to about 155 x 155 in double and in float; longer pairs train one at a
/// time. Measured with two threads (2-core Zen 4, 32 MiB L3; soft-DTW, d = 1, per pair
/// against the strips): 128 x 128 (8.5 MB tables) 2.1x faster, 180 x 180 (16.6 MB) 1.24x,
/// 220 x 220 (25 MB) 1.22x slower, and on one thread 256 x 256 (33 MB) 1.12x slower.
inline constexpr std::size_t lockstep_training_table_bytes = std::size_t(12) << 20;

/// The bytes of a training group's table for n x m pairs.
template <class T>
constexpr std::size_t lockstep_table_bytes(index_t n, index_t m) noexcept {
  return static_cast<std::size_t>((n + 1) * (m + 1) * lockstep_vectors<T>) * sizeof(exp_value<T>);
}

/// Which pairs of a batch run in lock-step: groups of G pairs of one shape, in batch order,
/// and the rest, one task each. Both traversals give the same bits, so the plan may depend on
/// the thread count: with fewer groups than threads, none is formed (one group on one core
/// would be slower than its pairs spread over all of them). `training`: groups for values and
/// gradients (lockstep_trains, and tables within lockstep_training_table_bytes).
struct lockstep_plan {
  std::vector<index_t> grouped;  // lockstep_pairs<T> pair indices per group
  std::vector<index_t> rest;
};

/// pair_at(k) gives the (x, y) views of pair k of count; threads: the workers that will run it.
template <class T, class Cost, class Smooth, class PairAt>
lockstep_plan plan_lockstep(measure<Cost, Smooth> const& m, index_t count, PairAt&& pair_at,
                            int threads = 1, bool training = false) {
  lockstep_plan plan;
  bool applies = false;
  if constexpr (lockstep_measure<T, Cost, Smooth>)
    applies = !m.divergence && count >= lockstep_pairs<T> && (!training || lockstep_trains<T, Cost, Smooth>);
  if (!applies) {
    plan.rest.resize(static_cast<std::size_t>(count));
    for (index_t k = 0; k < count; ++k) plan.rest[static_cast<std::size_t>(k)] = k;
    return plan;
  }
  if constexpr (lockstep_measure<T, Cost, Smooth>) {
    using D = typename Cost::distance_type;
    std::map<std::pair<index_t, index_t>, std::vector<index_t>> by_shape;
    for (index_t k = 0; k < count; ++k) {
      auto const [x, y] = pair_at(k);
      // independent channels are a sum of per-channel recursions, which the groups do not run
      // bands that hold one path take the single-pair walk (single_path.hpp), whose bits value() has
      band_geometry const band = m.band.geometry(x.length, y.length);
      bool fits = std::max(x.length, y.length) <= lockstep_max_length &&
                  !(m.independent_channels && x.channels > 1) && !band.single_path() &&
                  (!training || lockstep_table_bytes<T>(x.length, y.length) <= lockstep_training_table_bytes);
      if constexpr (std::same_as<Smooth, soft_min<T>>)
        fits = fits && exp_domain_applies<T, D>(x, y, m.smooth.gamma, band);
      if (fits)
        by_shape[{x.length, y.length}].push_back(k);
      else
        plan.rest.push_back(k);
    }
    auto const G = static_cast<std::size_t>(lockstep_pairs<T>);
    std::size_t groups = 0;
    for (auto const& [shape, members] : by_shape) groups += members.size() / G;
    // a group for every worker that runs at once: threads beyond the cores share them (20000
    // threads for 300 series of 16 took every pair out of the groups: 1.22 s against 0.05 s)
    unsigned const cores = std::thread::hardware_concurrency();
    int const busy = std::max(1, cores > 0 ? std::min(threads, static_cast<int>(cores)) : threads);
    bool const group = groups >= static_cast<std::size_t>(busy);
    for (auto const& [shape, members] : by_shape) {
      if (!group) {
        plan.rest.insert(plan.rest.end(), members.begin(), members.end());
        continue;
      }
      std::size_t const full = members.size() / G * G;
      plan.grouped.insert(plan.grouped.end(), members.begin(), members.begin() + full);
      plan.rest.insert(plan.rest.end(), members.begin() + full, members.end());
    }
  }
  return plan;
}

/// Runs group `group` of the plan: out(k, S(x_k, y_k)) for its G pairs; a soft value that the
/// exponential domain leaves inaccurate (exp_domain_accurate) comes from single(k) instead, the
/// single-pair value (which runs such a pair again in the log domain).
template <class T, class Cost, class Smooth, class PairAt, class Store, class Single>
void run_lockstep_group(measure<Cost, Smooth> const& m, lockstep_plan const& plan, index_t group,
                        PairAt&& pair_at, Store&& store, Single&& single, lockstep_workspace<T>& ws) {
  if constexpr (lockstep_measure<T, Cost, Smooth>) {
    constexpr int G = lockstep_pairs<T>;
    oriented_pair<T> pairs[G];
    index_t const* const members = plan.grouped.data() + group * G;
    for (int g = 0; g < G; ++g) {
      auto const [x, y] = pair_at(members[g]);
      pairs[g] = oriented_pair<T>::of(x, y);
    }
    index_t const n = pairs[0].x.length, c = pairs[0].y.length;
    band_geometry const band = m.band.geometry(n, c);
    T values[G];
    typename lockstep_cell_for<T, Cost, Smooth>::type const cell(m.smooth);
    lockstep_values<T, typename Cost::distance_type>(pairs, band, cell, values, ws);
    for (int g = 0; g < G; ++g) {
      if constexpr (std::same_as<Smooth, soft_min<T>>) {
        if (!exp_domain_accurate(values[g], m.smooth.gamma, n, c)) values[g] = single(members[g]);
      }
      store(members[g], values[g]);
    }
  }
}

}  // namespace resilin::host_detail
