#pragma once
// The host traversal of one pair: a strip wavefront. A strip is H = K * W consecutive rows
// (K vectors of W SIMD lanes); the lane of row i0 + o computes column t - o at step t, so the
// lanes sit on one anti-diagonal and each needs only what the lane above produced one or two
// steps before (a lane shift) or the row above the strip (a rolling row buffer). The K vectors
// of a step are independent, which hides the latency of the soft-min. One traversal serves
// every length, band and batch shape, with full SIMD width even for a single pair.
// Forward value only keeps O(m) memory; the training forward stores R in the same skewed
// layout (the cells of the band plus H - 1 per strip), which the backward reads.
#include <algorithm>
#include <cmath>
#include <vector>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/packs.hpp>
#include <resilin/backend/host/row_slices.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/backend/host/table_buffer.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/core/views.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

template <class T, class Cost, class Smooth>
struct pair_problem {
  Cost cost;
  Smooth smooth;
  series_view<T const> x;
  series_view<T const> y;
  band_geometry band;
};

/// R in the strip-skewed layout: strip s holds steps [t0, t1], K packs per step. Optionally,
/// beside R, what the backward of each cell needs (its move weights and the lane cost's
/// partials: `side` packs per vector), so that the backward evaluates no transcendental.
template <class T>
struct strip_table {
  using V = simd::pack<T>;
  static constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  table_buffer<V> cells;  // uninitialised: every step is written before it is read
  index_t used = 0;       // packs of cells in use
  std::vector<index_t> offset, t0, t1;
  table_buffer<V> backward_data;  // per step and vector: 3 weights, then the lane's partials
  index_t side = 0;              // packs per vector in backward_data (0: none kept)
  // Checkpointed (every > 0): instead of every strip's cells, the slot of the row above every
  // `every`-th strip (strip_row_slices: the part its cells read), slot s at
  // rows[slices.kept_offset(s)]; `cells` then holds one recomputed strip. With every > 1 (two
  // levels), the backward first recomputes the slots of one segment of `every` strips into
  // segment_rows.
  std::vector<T> rows, segment_rows;
  strip_row_slices<T> slices;
  index_t row_size = 0, every = 0;  // row_size: the entries of a whole row, m + H + 1
  index_t segment_first = -1;  // the first strip whose slot segment_rows holds (-1: none)
  std::vector<T> scratch_row;  // the backward's rolling row while it recomputes a strip

  void reset(index_t strips, index_t side_packs = 0) {
    used = 0;
    side = side_packs;
    row_size = 0;
    every = 0;
    segment_first = -1;
    offset.assign(static_cast<std::size_t>(strips), 0);
    t0.assign(static_cast<std::size_t>(strips), 0);
    t1.assign(static_cast<std::size_t>(strips), -1);
  }
  bool checkpointed() const noexcept { return every > 0; }
  /// Checkpointed: the slot of R(i0 - 1, j) above strip s, column j at row index j + 1 (two
  /// levels: s in the segment that segment_rows holds).
  row_slot<T> row_above(index_t s) const noexcept {
    return {(every == 1 ? rows.data() : segment_rows.data()) + slices.offset_of(s, segment_first),
            slices.first[static_cast<std::size_t>(s)], slices.width(s)};
  }
  /// Vector q's backward data at step t of strip s (the step is stored). The steps of a strip
  /// are stored last first, so that the backward reads ascending addresses.
  V* backward_at(index_t s, index_t t, int q) noexcept {
    return backward_data.data() + backward_index(s, t, q);
  }
  V const* backward_at(index_t s, index_t t, int q) const noexcept {
    return backward_data.data() + backward_index(s, t, q);
  }
  std::size_t backward_index(index_t s, index_t t, int q) const noexcept {
    auto const su = static_cast<std::size_t>(s);
    return static_cast<std::size_t>(((offset[su] / K + (t1[su] - t)) * K + q) * side);
  }
  /// R(i, j); +inf outside the stored steps (out of band); R(-1, -1) = 0.
  T at(index_t i, index_t j) const noexcept {
    if (i < 0) return j == -1 ? T(0) : math::infinity<T>();
    auto const s = static_cast<std::size_t>(i / H);
    int const o = static_cast<int>(i % H);
    index_t const t = j + o;
    if (t < t0[s] || t > t1[s]) return math::infinity<T>();
    return cells.data()[static_cast<std::size_t>(offset[s] + (t - t0[s]) * K + o / W)][o % W];
  }
  /// The K packs of strip s at step t (nullptr outside the stored steps).
  V const* step(index_t s, index_t t) const noexcept {
    auto const su = static_cast<std::size_t>(s);
    if (t < t0[su] || t > t1[su]) return nullptr;
    return cells.data() + offset[su] + (t - t0[su]) * K;
  }
};

/// Whether a lane cost computes a cell's costs and its gradient partials in one evaluation
/// (costs_and_partials; then, with the cell's move weights, gradient_terms, which a stored
/// table can keep for accumulate_terms, or accumulate_cached at once).
template <class Lanes>
inline constexpr bool caches_partials = requires { requires Lanes::caches_partials; };

/// A vector's step costs, with the lane cost's partials cached for the same cells when asked
/// and the lane cost caches them (costs_and_partials).
template <class T, class Lanes>
RESILIN_INLINE step3<simd::pack<T>> lane_costs(Lanes& lanes, int q, index_t t,
                                               typename simd::pack<T>::mask in, bool partials) {
  if constexpr (caches_partials<Lanes>) {
    if (partials) return lanes.costs_and_partials(q, t, in);
  }
  return lanes.costs(q, t, in);
}

/// Whether the value forward evaluates two vectors' cells at once (packs.hpp). A lane cost opts
/// in where it measured faster: soft-MSM, whose costs are long chains too. With DTW's and
/// CDTW's costs it measured no faster (CDTW values -8 %, within this machine's noise); the
/// training forward, which also stores the weights and terms, keeps one vector at a time.
template <class Lanes>
inline constexpr bool pairs_cells = requires { requires Lanes::pairs_cells; };

/// Steps of every strip of an n-row problem (the table's size is K packs per step).
template <class T>
index_t strip_steps(band_geometry const& band, index_t n) {
  constexpr int H = strip_vectors<T> * simd::lanes<T>;
  index_t total = 0;
  for (index_t i0 = 0; i0 < n; i0 += H) {
    strip_geometry<T> const geo(band, n, i0);
    total += geo.t1 - geo.t0 + 1;
  }
  return total;
}

/// One strip of the forward sweep (lanes.begin_strip(s * H) done): reads R(i0 - 1, j) at
/// rowbuf[j + 1] and leaves R(i0 + H - 1, j) there for the next strip (the writes trail the
/// reads), stores every step's K packs at out + (t - t0) * K when out is not null and, when
/// `side_table` is not null, every cell's move weights and gradient terms in it. The packs of
/// the strip's last step go to `last`.
template <class T, class P, class Lanes>
void forward_strip(P const& p, Lanes& lanes, index_t s, strip_geometry<T> const& geo,
                   std::vector<T>& rowbuf, simd::pack<T>* out, strip_table<T>* side_table,
                   simd::pack<T>* last) {
  using V = simd::pack<T>;
  bool const side = side_table != nullptr;
  constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  T const inf = math::infinity<T>();
  V cur[K], prev[K];
  for (int q = 0; q < K; ++q) cur[q] = prev[q] = V(inf);
  for (index_t t = geo.t0; t <= geo.t1; ++t) {
    auto const tv = geo.step(t);
    V next[K];
    // the costs of all K vectors first: they do not depend on R, so the K recursion chains
    // that follow sit next to each other in the instruction stream and overlap
    // (a vector with no lane in the band is skipped: +inf, as the selects below would give)
    step3<V> c[K];
    for (int q = 0; q < K; ++q)
      c[q] = geo.idle(q, t) ? step3<V>{V(T(0)), V(T(0)), V(T(0))} : lane_costs<T>(lanes, q, t, geo.inside(q, tv), side);
    bool paired = false;
    if constexpr (pairs_cells<Lanes>) {
      if (!side) {  // two vectors' cells at a time, as one value of two packs (packs.hpp)
        using P2 = simd::packs<T, 2>;
        static_assert(K % 2 == 0);
        V up[K], diag[K];
        for (int q = 0; q < K; ++q) {
          up[q] = simd::shift_in_front(cur[q], q == 0 ? V(rowbuf[static_cast<std::size_t>(t + 1)]) : cur[q - 1]);
          diag[q] = simd::shift_in_front(prev[q], q == 0 ? V(rowbuf[static_cast<std::size_t>(t)]) : prev[q - 1]);
        }
        for (int q = 0; q < K; q += 2) {
          if (geo.idle(q, t) && geo.idle(q + 1, t)) {
            next[q] = next[q + 1] = V(inf);
            continue;
          }
          step3<P2> const c2{P2::of(c[q].diag, c[q + 1].diag), P2::of(c[q].up, c[q + 1].up),
                             P2::of(c[q].left, c[q + 1].left)};
          P2 const r = cell_value(p.smooth, c2, P2::of(diag[q], diag[q + 1]), P2::of(up[q], up[q + 1]),
                                  P2::of(cur[q], cur[q + 1]));
          next[q] = simd::select(geo.inside(q, tv), r.v[0], V(inf));
          next[q + 1] = simd::select(geo.inside(q + 1, tv), r.v[1], V(inf));
        }
        paired = true;
      }
    }
    for (int q = 0; q < K && !paired; ++q) {
      if (geo.idle(q, t)) {  // (nor its backward data: the backward skips it too)
        next[q] = V(inf);
        continue;
      }
      V const above1 = q == 0 ? V(rowbuf[static_cast<std::size_t>(t + 1)]) : cur[q - 1];
      V const above2 = q == 0 ? V(rowbuf[static_cast<std::size_t>(t)]) : prev[q - 1];
      V const up = simd::shift_in_front(cur[q], above1);
      V const diag = simd::shift_in_front(prev[q], above2);
      if constexpr (caches_partials<Lanes>) {
        if (side) {  // the backward's weights from the same candidates, and the gradient terms
          V* const b = side_table->backward_at(s, t, q);
          value_and_weights<V> const vw = cell_value_and_weights(p.smooth, c[q], diag, up, cur[q]);
          next[q] = simd::select(geo.inside(q, tv), vw.value, V(inf));
          b[0] = vw.weights.diag;
          b[1] = vw.weights.up;
          b[2] = vw.weights.left;
          lanes.gradient_terms(q, vw.weights, b + 3);
          continue;
        }
      }
      next[q] = simd::select(geo.inside(q, tv), cell_value(p.smooth, c[q], diag, up, cur[q]), V(inf));
    }
    for (int q = 0; q < K; ++q) {
      prev[q] = cur[q];
      cur[q] = next[q];
    }
    if (out) std::copy(next, next + K, out + (t - geo.t0) * K);
    index_t const jl = t - (H - 1);  // the strip's last row feeds the next strip
    if (jl >= -1) rowbuf[static_cast<std::size_t>(jl + 1)] = next[K - 1][W - 1];
  }
  for (int q = 0; q < K; ++q) last[q] = cur[q];
}

/// Forward sweep. Returns R(n-1, m-1). With a table, stores every step for the backward; with
/// side_packs > 0 (lanes that cache partials: 3 + Lanes::gradient_term_packs(channels)), also
/// every cell's move weights and gradient terms, which the backward then reads instead of
/// evaluating transcendentals. With checkpoint_every = k > 0 (and no side packs), the table
/// keeps only the slot of the row above every k-th strip (strip_table::rows, row_slices.hpp).
/// k = 1: the backward recomputes each strip from its slot, at most 1/H of R's memory for one
/// more forward. k > 1 (two levels, k about sqrt(strips): pair.hpp's row_checkpoint_interval):
/// the backward first recomputes the slots of each segment of k strips from its first, so that
/// about 2 sqrt(n / H) slots are held, for two more forwards.
template <class T, class P, class Lanes>
T forward(P const& p, Lanes& lanes, std::vector<T>& rowbuf, strip_table<T>* table,
          index_t side_packs = 0, index_t checkpoint_every = 0) {
  using V = simd::pack<T>;
  constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  index_t const n = p.x.length, m = p.y.length;
  T const inf = math::infinity<T>();
  rowbuf.assign(static_cast<std::size_t>(m + H + 1), inf);  // rowbuf[j + 1] = R(i0 - 1, j)
  rowbuf[0] = T(0);                                          // the virtual origin R(-1, -1)
  index_t const strips = (n + H - 1) / H;
  bool const checkpoint = checkpoint_every > 0;
  bool const side = table && side_packs > 0 && !checkpoint;
  if (table) {
    table->reset(strips, side ? side_packs : 0);
    if (checkpoint) {
      table->row_size = m + H + 1;
      table->every = checkpoint_every;
      table->slices.plan(p.band, n, checkpoint_every);
      table->rows.resize(static_cast<std::size_t>(table->slices.kept_total()));
    } else {
      auto const packs = static_cast<std::size_t>(strip_steps<T>(p.band, n) * K);
      table->cells.reserve(packs);
      if (side) table->backward_data.reserve(packs * static_cast<std::size_t>(side_packs));
    }
  }
  lanes.begin_pair(p.cost, p.x, p.y);
  V last[K];
  for (index_t s = 0; s < strips; ++s) {
    strip_geometry<T> const geo(p.band, n, s * H);
    lanes.begin_strip(s * H);
    V* out = nullptr;
    if (table) {
      auto const su = static_cast<std::size_t>(s);
      table->t0[su] = geo.t0;
      table->t1[su] = geo.t1;
      if (checkpoint) {
        if (s % checkpoint_every == 0)
          table->slices.keep(s, rowbuf.data(), table->rows.data() + table->slices.kept_offset(s), inf);
      } else {
        table->offset[su] = table->used;
        table->used += (geo.t1 - geo.t0 + 1) * K;
        out = table->cells.data() + table->offset[su];
      }
    }
    forward_strip(p, lanes, s, geo, rowbuf, out, side ? table : nullptr, last);
    lanes.end_strip();
  }
  lanes.end_pair();
  // R(n-1, m-1) sits in lane o = (n-1) mod H at step m-1+o, the last strip's last step.
  int const o = static_cast<int>((n - 1) % H);
  return last[o / W][o % W];
}

/// Two-level checkpoints (table.every > 1): the slots above strips s0..s1 of one segment into
/// table.segment_rows, recomputed from the kept slot above s0 with the forward's bits (each strip
/// from its slot restored into the rolling row).
template <class T, class P, class Lanes>
void recompute_segment(P const& p, Lanes& lanes, strip_table<T>& table, index_t s0, index_t s1) {
  using V = simd::pack<T>;
  constexpr int K = strip_vectors<T>, H = K * V::width;
  strip_row_slices<T> const& slices = table.slices;
  table.segment_rows.resize(static_cast<std::size_t>(slices.span(s0, s1 + 1)));
  table.segment_first = s0;
  T const* const head = table.rows.data() + slices.kept_offset(s0);
  std::copy(head, head + slices.width(s0), table.segment_rows.data());
  table.scratch_row.resize(static_cast<std::size_t>(table.row_size));
  for (index_t s = s0; s < s1; ++s) {
    lanes.begin_strip(s * H);
    slices.restore(s, table.segment_rows.data() + slices.span(s0, s), table.scratch_row.data());
    V last[K];
    forward_strip(p, lanes, s, strip_geometry<T>(p.band, p.x.length, s * H), table.scratch_row,
                  static_cast<V*>(nullptr), static_cast<strip_table<T>*>(nullptr), last);
    slices.keep(s + 1, table.scratch_row.data(), table.segment_rows.data() + slices.span(s0, s + 1),
                math::infinity<T>());
  }
}

/// The smallest k with k * k >= n (n >= 0): two-level checkpoints hold about 2 sqrt(n) rows.
inline index_t ceil_sqrt(index_t n) {
  if (n <= 0) return 0;
  // floor(sqrt(n)) from the double's estimate, corrected without forming a square beyond n
  auto f = static_cast<index_t>(std::sqrt(static_cast<double>(n)));
  while (f > n / f) --f;
  while (f + 1 <= n / (f + 1)) ++f;
  return f * f == n ? f : f + 1;
}

/// Strip s of a checkpointed table (table.every > 0), taken in decreasing order of s after a
/// forward: its cells recomputed into table.cells from the row above it, where table.at() then
/// finds them (two levels: the slots of its segment first); lanes.begin_strip(s * H) done.
/// Returns that row's slot (R(i0 - 1, j) at row index j + 1). A whole table:
/// lanes.begin_strip alone, a null slot.
template <class T, class P, class Lanes>
row_slot<T> load_strip(P const& p, Lanes& lanes, strip_table<T>& table, index_t s, strip_geometry<T> const& geo) {
  using V = simd::pack<T>;
  constexpr int K = strip_vectors<T>, H = K * V::width;
  if (table.every > 1 && (table.segment_first < 0 || s < table.segment_first))
    recompute_segment(p, lanes, table, s / table.every * table.every, s);  // s ends a segment
  lanes.begin_strip(s * H);
  if (!table.checkpointed()) return {};
  row_slot<T> const row_above = table.row_above(s);
  table.scratch_row.resize(static_cast<std::size_t>(table.row_size));
  table.slices.restore(s, row_above.data, table.scratch_row.data());
  V last[K];
  forward_strip(p, lanes, s, geo, table.scratch_row,
                table.cells.reserve(static_cast<std::size_t>((geo.t1 - geo.t0 + 1) * K)),
                static_cast<strip_table<T>*>(nullptr), last);
  return row_above;
}

/// Backward sweep over a stored table. With A = seed * dR(n-1,m-1)/dR(i,j) and G = A * weights
/// (the expected use of each move into (i, j)), calls lanes.accumulate(q, t, in, G) (lane costs
/// that cache partials: accumulate_terms of the stored terms, or accumulate_cached) for the
/// gradient and visit(i, j, A, G) for every in-band cell when Visit is not nullptr_t. A
/// checkpointed table's strips are recomputed one at a time from their rows above (two levels:
/// those rows first, a segment at a time), with the forward's bits, so the results are those of
/// the whole table.
template <class T, class P, class Lanes, class Visit>
void backward(P const& p, strip_table<T>& table, T seed, Lanes& lanes, std::vector<T>& g_up,
              std::vector<T>& g_diag, Visit&& visit, series_view<T> gx, series_view<T> gy) {
  using V = simd::pack<T>;
  constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  constexpr bool visits = !std::is_same_v<std::remove_cvref_t<Visit>, std::nullptr_t>;
  index_t const n = p.x.length, m = p.y.length;
  T const inf = math::infinity<T>();
  // g_up[j + H] = G.up(i0 + H, j), g_diag[j + H] = G.diag(i0 + H, j): the row below the strip.
  g_up.assign(static_cast<std::size_t>(m + 2 * H + 2), T(0));
  g_diag.assign(static_cast<std::size_t>(m + 2 * H + 2), T(0));
  auto const col = [](index_t j) { return static_cast<std::size_t>(j + H); };
  index_t const strips = (n + H - 1) / H;
  lanes.begin_pair(p.cost, p.x, p.y, gx, gy);
  V const inf_v(inf), zero(T(0));
  bool const stored = caches_partials<Lanes> && table.side > 0;  // weights and gradient terms kept
  table.segment_first = -1;
  for (index_t s = strips - 1; s >= 0; --s) {
    index_t const i0 = s * H;
    strip_geometry<T> const geo(p.band, n, i0);
    // checkpointed: the strip's cells again, from the row above it (cells hold one strip)
    row_slot<T> const row_above = load_strip(p, lanes, table, s, geo);
    // R(i0 - 1, j): the table's previous strip, or the kept slot (+inf beyond it: only lanes out
    // of the band read there)
    auto const above = [&](index_t j) { return row_above.data ? row_above.at(j + 1, inf) : table.at(i0 - 1, j); };
    int const seed_o = static_cast<int>(n - 1 - i0);
    index_t const seed_t = seed_o < H ? (m - 1) + seed_o : -1;
    V gu1[K], gl1[K], gd1[K], gd2[K];  // G at steps t+1 and t+2
    for (int q = 0; q < K; ++q) gu1[q] = gl1[q] = gd1[q] = gd2[q] = zero;
    for (index_t t = geo.t1; t >= geo.t0; --t) {
      auto const tv = geo.step(t);
      V const* const r1 = stored ? nullptr : table.step(s, t - 1);
      V const* const r2 = stored ? nullptr : table.step(s, t - 2);
      V const above1(stored ? T(0) : above(t)), above2(stored ? T(0) : above(t - 1));
      step3<V> c[K];  // the costs of all K vectors first, as in the forward
      if (!stored)  // with a gradient, one evaluation of the costs for both uses
        for (int q = 0; q < K; ++q)
          if (!geo.idle(q, t)) c[q] = lane_costs<T>(lanes, q, t, geo.inside(q, tv), gx.data != nullptr);
      step3<V> g[K];
      for (int q = 0; q < K; ++q) {
        if (geo.idle(q, t)) {  // no lane in the band: zero adjoints and moves, as below
          g[q] = {zero, zero, zero};
          continue;
        }
        V const below_up = q + 1 < K ? gu1[q + 1] : V(g_up[col(t - H + 1)]);
        V const below_diag = q + 1 < K ? gd2[q + 1] : V(g_diag[col(t - H + 2)]);
        V a = simd::shift_in_back(gu1[q], below_up) + gl1[q] + simd::shift_in_back(gd2[q], below_diag);
        if (t == seed_t && seed_o / W == q) a.set(seed_o % W, a[seed_o % W] + seed);
        auto const in = geo.inside(q, tv);
        step3<V> w;
        V const* kept = nullptr;  // the cell's stored weights and gradient terms
        if (stored) {
          kept = table.backward_at(s, t, q);
          w = {kept[0], kept[1], kept[2]};
        } else {
          V const left = r1 ? r1[q] : inf_v;
          V const up = simd::shift_in_front(left, q == 0 ? above1 : (r1 ? r1[q - 1] : inf_v));
          V const diag = simd::shift_in_front(r2 ? r2[q] : inf_v, q == 0 ? above2 : (r2 ? r2[q - 1] : inf_v));
          w = cell_weights(p.smooth, c[q], diag, up, left);
        }
        a = simd::select(in, a, zero);
        g[q] = {a * w.diag, a * w.up, a * w.left};
        if (gx.data) {
          if constexpr (caches_partials<Lanes>) {
            if (kept) lanes.accumulate_terms(q, t, a, kept + 3);
            else lanes.accumulate_cached(q, t, a, w);
          } else {
            lanes.accumulate(q, t, in, g[q]);
          }
        }
        if constexpr (visits) {
          for (int k = 0; k < W; ++k)
            if (in[k])
              visit(i0 + q * W + k, t - q * W - k, a[k],
                    step3<T>{g[q].diag[k], g[q].up[k], g[q].left[k]});
        }
      }
      g_up[col(t)] = g[0].up[0];
      g_diag[col(t)] = g[0].diag[0];
      for (int q = 0; q < K; ++q) {
        gd2[q] = gd1[q];
        gd1[q] = g[q].diag;
        gu1[q] = g[q].up;
        gl1[q] = g[q].left;
      }
    }
    lanes.end_strip();
  }
  lanes.end_pair();
}

}  // namespace resilin::host_detail
