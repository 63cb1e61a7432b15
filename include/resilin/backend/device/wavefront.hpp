#pragma once
// The CUDA backend's per-block programs, written once in pure C++20 so that g++ compiles them
// too: the kernels in backend/cuda/kernels.cuh are thin shells that run these programs with a
// CTA executor (threadIdx.x, __syncthreads), and tests/host/test_device_schedule.cpp runs the
// very same programs with an emulated CTA (every thread index in turn, in lock-step per step).
//
// Traversal: one block per alignment problem; step t is the anti-diagonal i + j = t; the
// threads stride the in-band cells of that diagonal, indexed by their row i. Within a step a
// thread reads only the two previous diagonals (forward) or the two next ones (backward), and
// writes only its own cells, so the steps need one barrier each and the result does not depend
// on the order in which the threads of a step run.
//
// Memory: the forward keeps 3 rolling diagonals (indexed by row, `stride` >= rows); the value
// path puts the shorter series on the rows (transposed_cost), so this is O(min(n, m)). The
// training path stores R, one value per grid cell, anti-diagonal-major (coalesced), and the
// backward recomputes the cell weights from R and the costs (nothing else of size n * m), with
// 7 rolling diagonals of G = A * weights. Gradients go through the cost model's step_grad;
// all cells of one diagonal touch distinct rows and columns (in stencil phases, see
// grad_stencil), so there are no atomics and every sum has a fixed order: run-to-run bitwise
// deterministic.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <resilin/backend/device/schedule.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/core/views.hpp>
#include <resilin/cost/dtw.hpp>
#include <resilin/cost/warp_penalty.hpp>
#include <resilin/smoothing/hard_min.hpp>

namespace resilin {

/// How many rows (and columns) back from (i, j) a cost model's step_grad for cell (i, j)
/// writes: 1 when it touches only x_i and y_j (DTW). The device backward runs the gradient of
/// a diagonal in `value` phases (cells with i mod value = phase) so that no two cells of a
/// phase write the same row or column. A cost model declares `static constexpr int
/// grad_stencil = k;` to set it; the default, 2, covers costs that read x_{i-1} and y_{j-1}.
template <class Cost>
struct grad_stencil {
 private:
  static constexpr int pick() {
    if constexpr (requires { Cost::grad_stencil; }) return static_cast<int>(Cost::grad_stencil);
    else return 2;
  }

 public:
  static constexpr int value = pick();
};
template <class D>
struct grad_stencil<dtw_cost<D>> {
  static constexpr int value = 1;
};
template <class C>
struct grad_stencil<transposed_cost<C>> {
  static constexpr int value = grad_stencil<C>::value;
};
template <class C>
struct grad_stencil<warp_penalty_cost<C>> {
  static constexpr int value = grad_stencil<C>::value;
};

namespace device_detail {

// --- geometry --------------------------------------------------------------------------------

/// The rows [lo, hi] of the in-grid, in-band cells of one anti-diagonal (empty when lo > hi).
struct diag_span {
  index_t lo = 0;
  index_t hi = -1;
  RESILIN_HD constexpr bool contains(index_t i) const noexcept { return lo <= i && i <= hi; }
};

/// The grid part of anti-diagonal t of an (n, m) grid: rows max(0, t - m + 1) .. min(n - 1, t).
RESILIN_HD constexpr index_t grid_lo(index_t m, index_t t) noexcept {
  return t - (m - 1) > 0 ? t - (m - 1) : 0;
}

/// The Itakura parallelogram's rows on anti-diagonal t (unclamped; may be empty): with j = t - i,
/// each of band_geometry::parallelogram_row's four conditions bounds i on one side.
RESILIN_HD RESILIN_DEVICE_NOINLINE constexpr diag_span parallelogram_diagonal(band_geometry const& g, index_t t) noexcept {
  using wide = detail::wide_int;
  wide const P = g.slope, Q = itakura_slope_scale, A = g.m - 1, B = g.n - 1, T = t;
  wide const N = A * B, up = P * A + Q * B, down = Q * A + P * B;
  wide const lo1 = detail::ceil_div(Q * T * B, up);                // Q b <= P a
  wide const lo2 = detail::ceil_div(P * T * B - (P - Q) * N, down);  // Q (N - a) <= P (N - b)
  wide const hi1 = detail::floor_div(P * T * B, down);             // Q a <= P b
  wide const hi2 = detail::floor_div((P - Q) * N + Q * T * B, up);   // Q (N - b) <= P (N - a)
  return {static_cast<index_t>(lo1 > lo2 ? lo1 : lo2), static_cast<index_t>(hi1 < hi2 ? hi1 : hi2)};
}

/// The in-band cells of anti-diagonal t. With j = t - i, the Sakoe-Chiba condition
/// |i (m-1) - j (n-1)| <= W becomes |i (n+m-2) - t (n-1)| <= W: one interval of rows. An
/// Itakura band unites it with the parallelogram's interval; both hold the point where the
/// diagonal crosses, so the union is their hull.
RESILIN_HD constexpr diag_span diagonal(band_geometry const& g, index_t t) noexcept {
  index_t const n = g.n, m = g.m;
  if (t < 0 || t > n + m - 2) return {0, -1};
  index_t lo = grid_lo(m, t);
  index_t hi = t < n - 1 ? t : n - 1;
  if (g.banded()) {  // banded implies n, m >= 2
    index_t const s = n + m - 2, c = t * (n - 1);
    index_t blo = detail::ceil_div(c - g.half_width, s);
    index_t bhi = detail::floor_div(c + g.half_width, s);
    if (g.itakura()) {
      diag_span const p = parallelogram_diagonal(g, t);
      blo = p.lo < blo ? p.lo : blo;
      bhi = p.hi > bhi ? p.hi : bhi;
    }
    lo = blo > lo ? blo : lo;
    hi = bhi < hi ? bhi : hi;
  }
  return {lo, hi};
}

RESILIN_HD constexpr index_t triangle(index_t k) noexcept { return k > 0 ? k * (k + 1) / 2 : 0; }

/// Cells of an (n, m) grid on the anti-diagonals before t: the offset of diagonal t in the
/// anti-diagonal-major layout of R (inclusion-exclusion over the triangle i + j < t).
RESILIN_HD constexpr index_t diag_offset(index_t n, index_t m, index_t t) noexcept {
  return triangle(t) - triangle(t - n) - triangle(t - m) + triangle(t - n - m);
}

/// Index of cell (i, j) in the anti-diagonal-major layout of an (n, m) grid.
RESILIN_HD constexpr index_t diag_index(index_t n, index_t m, index_t i, index_t j) noexcept {
  return diag_offset(n, m, i + j) + (i - grid_lo(m, i + j));
}

/// The band, resolvable on the device for every pair of lengths: band_spec::radius_for(n, m)
/// depends on max(n, m) only, and a window band's radius is detail::window_radius, two
/// correctly rounded products and a ceil, the same bits on the device as on the host; an
/// Itakura slope is already an integer. Nothing is copied from the host, so the launches that
/// use it can be captured in a CUDA graph.
struct device_band {
  index_t radius = -1;   // -1: none (unless window >= 0 or slope > 0), else the radius in cells
  double window = -1;    // >= 0: a window fraction of max(n, m)
  index_t slope = 0;     // > 0: an Itakura parallelogram, band_spec::itakura_slope_scaled()

  RESILIN_HD index_t radius_for(index_t n, index_t m) const noexcept {
    index_t const longest = n > m ? n : m;
    if (window >= 0) return detail::window_radius(window, longest);
    if (radius < 0) return -1;
    return radius < longest ? radius : longest;
  }
  /// band_spec::geometry(n, m) of the band it came from.
  RESILIN_HD band_geometry geometry(index_t n, index_t m) const noexcept {
    if (slope > 0) return band_geometry::make_itakura(n, m, slope);
    return band_geometry::make(n, m, radius_for(n, m));
  }
};

/// Host side: the device form of a band_spec.
inline device_band make_device_band(band_spec const& b) noexcept {
  if (b.type() == band_spec::kind::window) return {-1, b.window_fraction(), 0};
  if (b.type() == band_spec::kind::itakura) return {-1, -1, b.itakura_slope_scaled()};
  if (b.type() == band_spec::kind::none) return {-1, -1, 0};
  index_t const big = index_t(1) << 60;  // radius_for(big, big) is the radius itself
  return {b.radius_for(big, big), -1, 0};
}

// --- jobs: which two series a block aligns -----------------------------------------------------

/// Paired batches: job k = p * batch + b, p = 0: (X[b], Y[b]), p = 1: (X[b], X[b]),
/// p = 2: (Y[b], Y[b]) (the divergence's self terms). Pairwise (a, b) over |X| x |Y|:
/// k < |X||Y|: (X[k / |Y|], Y[k % |Y|]); then (X[a], X[a]) for each a; then (Y[b], Y[b]).
enum class job_layout : unsigned char { paired, pairwise };

struct job {
  bool x_from_y;   // the rows series comes from Y
  bool y_from_x;   // the columns series comes from X
  index_t xs, ys;  // series indices
  int problem;     // 0: (x, y), 1: self of X, 2: self of Y
};

RESILIN_HD constexpr job job_of(job_layout layout, index_t k, index_t nx, index_t ny) noexcept {
  if (layout == job_layout::paired) {
    index_t const b = k % nx;
    int const p = static_cast<int>(k / nx);
    if (p == 0) return {false, false, b, b, 0};
    if (p == 1) return {false, true, b, b, 1};
    return {true, false, b, b, 2};
  }
  if (k < nx * ny) return {false, false, k / ny, k % ny, 0};
  k -= nx * ny;
  if (k < nx) return {false, true, k, k, 1};
  k -= nx;
  return {true, false, k, k, 2};
}

RESILIN_HD constexpr index_t job_count(job_layout layout, index_t nx, index_t ny,
                                       bool divergence) noexcept {
  if (layout == job_layout::paired) return nx * (divergence ? 3 : 1);
  if (nx * ny == 0) return 0;  // no pair: no self problems either
  return nx * ny + (divergence ? nx + ny : 0);
}

/// One alignment problem on an (x.length, y.length) grid.
template <class T, class Cost, class Smooth>
struct grid_problem {
  Cost cost;
  Smooth smooth;
  series_view<T const> x;  // rows
  series_view<T const> y;  // columns
  band_geometry band;
};

// --- executors -------------------------------------------------------------------------------
// An executor runs `f(thread, threads)` on every thread of the block (for_each), separates the
// steps (sync) and picks one thread for single writes (leader). The CTA executor lives in
// backend/cuda/kernels.cuh; this one emulates a CTA on the host, one thread index after the
// other, in increasing or decreasing order (a correct step gives the same bits either way).

struct emulated_cta {
  int threads = 32;
  bool reverse = false;
  template <class F>
  void for_each(F const& f) const {
    for (int k = 0; k < threads; ++k) f(reverse ? threads - 1 - k : k, threads);
  }
  void sync() const noexcept {}
  bool leader() const noexcept { return true; }
};

/// The shuffle program's warp on the CPU: one register per lane, a shuffle reads the lanes'
/// registers as they were before it (CUDA's __shfl_up_sync / __shfl_sync semantics).
struct emulated_warp {
  bool reverse = false;  // run the lanes of a step last to first
  template <class T>
  struct reg {
    T v[32];
    explicit reg(T x) noexcept {
      for (auto& e : v) e = x;
    }
    T& at(int lane) noexcept { return v[lane]; }
    T const& at(int lane) const noexcept { return v[lane]; }
  };
  template <class T>
  reg<T> shfl_up(reg<T> const& r) const noexcept {  // lane 0 keeps its own value
    reg<T> o(r.v[0]);
    for (int l = 1; l < 32; ++l) o.v[l] = r.v[l - 1];
    return o;
  }
  template <class T>
  reg<T> shfl_down(reg<T> const& r) const noexcept {  // lane 31 keeps its own value
    reg<T> o(r.v[31]);
    for (int l = 0; l < 31; ++l) o.v[l] = r.v[l + 1];
    return o;
  }
  template <class T>
  T broadcast(reg<T> const& r, int lane) const noexcept { return r.v[lane]; }
  template <class F>
  void for_each_lane(F const& f) const {
    for (int k = 0; k < 32; ++k) f(reverse ? 31 - k : k);
  }
  void sync() const noexcept {}
  bool leader() const noexcept { return true; }
};

// --- forward ---------------------------------------------------------------------------------

/// Where the diagonals of R live, each viewed as a pointer indexed by row i:
///  - the whole grid, anti-diagonal-major (n * m values; the plain training store);
///  - slots of `stride` values, slot s holding diagonal first + s (the checkpointed mode's
///    segment and checkpoint buffers, and the forward's rolling ring with `ring` set: slot t % 3).
template <class T>
struct diag_store {
  T* base = nullptr;    // null: nothing stored
  index_t n = 0, m = 0;
  index_t stride = 0;   // 0: the whole grid
  index_t first = 0;    // slots: the diagonal in slot 0
  bool ring = false;    // slots: three rolling slots, diagonal t in slot t % 3

  static RESILIN_HD diag_store grid(T* base, index_t n, index_t m) noexcept { return {base, n, m, 0, 0, false}; }
  static RESILIN_HD diag_store slots(T* base, index_t stride, index_t first) noexcept {
    return {base, 0, 0, stride, first, false};
  }
  static RESILIN_HD diag_store rolling(T* base, index_t stride) noexcept { return {base, 0, 0, stride, 0, true}; }

  RESILIN_HD T* diag(index_t t) const noexcept {
    if (stride == 0) return base + diag_offset(n, m, t) - grid_lo(m, t);
    if (ring) return base + ((t % 3 + 3) % 3) * stride;
    return base + (t - first) * stride;
  }
};

/// One forward step: the cells of diagonal t from diagonals t-1 and t-2 of `rows` (the rolling
/// ring, or the segment being recomputed), written to rows; with `out` (a checkpoint or the
/// whole-grid store) also there.
template <class T, class Cost, class Smooth>
struct forward_step {
  grid_problem<T, Cost, Smooth> const* p;
  index_t t;
  diag_store<T> rows;
  T* out;

  RESILIN_HD void operator()(int thread, int threads) const noexcept {
    T const inf = math::infinity<T>();
    diag_span const cur = diagonal(p->band, t), p1 = diagonal(p->band, t - 1),
                    p2 = diagonal(p->band, t - 2);
    T* const c = rows.diag(t);
    T const* const r1 = rows.diag(t - 1);
    T const* const r2 = rows.diag(t - 2);
    for (index_t i = cur.lo + thread; i <= cur.hi; i += threads) {
      index_t const j = t - i;
      T const left = p1.contains(i) ? r1[i] : inf;
      T const up = p1.contains(i - 1) ? r1[i - 1] : inf;
      T const diag = p2.contains(i - 1) ? r2[i - 1] : (i == 0 && j == 0 ? T(0) : inf);
      step3<T> const cost = p->cost.step(p->x, p->y, i, j);
      T const r = cell_value(p->smooth, cost, diag, up, left);
      c[i] = r;
      if (out) out[i] = r;
    }
  }
};

/// Checkpoints of the checkpointed training mode: the forward keeps diagonals s k - 2 and
/// s k - 1 for every segment s >= 1 of k diagonals (2 slots each), from which the backward
/// recomputes one segment at a time.
struct checkpoints {
  index_t interval = 0;  // k; 0: the whole grid is stored
  RESILIN_HD constexpr index_t segments(index_t diagonals) const noexcept {
    return (diagonals + interval - 1) / interval;
  }
  /// The checkpoint slot of diagonal t, or -1 when t is not kept.
  RESILIN_HD constexpr index_t slot(index_t t) const noexcept {
    index_t const s = (t + 2) / interval, r = (t + 2) % interval;
    return s >= 1 && r < 2 ? (s - 1) * 2 + r : -1;
  }
  /// slot(t) in a grid of `diagonals` anti-diagonals: -1 also for the diagonals s k - 2 and
  /// s k - 1 of s = segments(diagonals), which begin no segment and have no slot (stored, they
  /// went into the next job's slots or past the workspace when diagonals mod k was 0 or k - 1).
  RESILIN_HD constexpr index_t kept_slot(index_t t, index_t diagonals) const noexcept {
    return (t + 2) / interval < segments(diagonals) ? slot(t) : -1;
  }
};

/// The interval k ~ sqrt(2 (n + m)) that minimises the slots of a checkpointed job (segment k + 2
/// plus 2 per segment) for grids of up to `diagonals` anti-diagonals.
constexpr index_t checkpoint_interval(index_t diagonals) noexcept {
  index_t k = 1;
  while (k * k < 2 * diagonals) ++k;
  return k < 2 ? 2 : k;
}

/// Slots (of stride values) one checkpointed job needs: the segment (k + 2) and the
/// checkpoints (2 per segment after the first).
constexpr index_t checkpoint_slots(index_t diagonals, index_t k) noexcept {
  index_t const segs = (diagonals + k - 1) / k;
  return k + 2 + 2 * (segs > 1 ? segs - 1 : 0);
}

/// The forward sweep of one problem by one block. Returns R(n-1, m-1) on every thread.
/// ring: 3 * stride values (stride >= x.length); store: nothing, the whole grid
/// (anti-diagonal-major) or, with cp.interval, the checkpoint slots.
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD T forward_program(Exec const& ex, grid_problem<T, Cost, Smooth> const& p, T* ring,
                             index_t stride, diag_store<T> store, checkpoints cp = {}) {
  index_t const last = p.x.length + p.y.length - 2;
  diag_store<T> const rows = diag_store<T>::rolling(ring, stride);
  for (index_t t = 0; t <= last; ++t) {
    T* out = nullptr;
    if (store.base && cp.interval == 0) out = store.diag(t);
    else if (store.base && cp.kept_slot(t, last + 1) >= 0) out = store.base + cp.kept_slot(t, last + 1) * stride;
    ex.for_each(forward_step<T, Cost, Smooth>{&p, t, rows, out});
    ex.sync();
  }
  return rows.diag(last)[p.x.length - 1];
}

// --- backward --------------------------------------------------------------------------------

/// Optional outputs of the backward sweep, each (n, m) row-major or null.
template <class T>
struct backward_outputs {
  series_view<T> gx{};       // adds seed * dS/dx (null data: no gradient)
  series_view<T> gy{};
  matrix_view<T> e{};        // A(i, j) = seed * dS/dR(i, j) (the soft alignment matrix)
  matrix_view<T> diag{}, up{}, left{};  // G = A * weights (expected move use)
};

/// The ring of the backward: G.up and G.left of 2 diagonals, G.diag of 3 (7 * stride values).
template <class T>
struct g_ring {
  T* base;
  index_t stride;
  RESILIN_HD T* up(index_t t) const noexcept { return base + (t & 1) * stride; }
  RESILIN_HD T* left(index_t t) const noexcept { return base + (2 + (t & 1)) * stride; }
  RESILIN_HD T* diag(index_t t) const noexcept { return base + (4 + t % 3) * stride; }
  /// What step t reads (G.up, G.left of t + 1, G.diag of t + 2) and writes (G of t).
  struct step_view {
    T const* up1;
    T const* left1;
    T const* diag2;
    T* up0;
    T* left0;
    T* diag0;
  };
  RESILIN_HD step_view at_step(index_t t) const noexcept {
    return {up(t + 1), left(t + 1), diag(t + 2), up(t), left(t), diag(t)};
  }
};

/// The part of a backward cell every traversal shares: G = A * weights from the cell's costs
/// and R of its three predecessors, the optional outputs and, for stencil-1 costs, the
/// gradient.
template <class T, class Cost, class Smooth>
RESILIN_HD RESILIN_INLINE step3<T> backward_cell(grid_problem<T, Cost, Smooth> const& p, index_t i,
                                                 index_t j, T a, step3<T> const& cost, T diag,
                                                 T up, T left, backward_outputs<T> const& o) noexcept {
  step3<T> const w = cell_weights(p.smooth, cost, diag, up, left);
  step3<T> const use{a * w.diag, a * w.up, a * w.left};
  if (o.e.data) o.e(i, j) = a;
  if (o.diag.data) o.diag(i, j) = use.diag;
  if (o.up.data) o.up(i, j) = use.up;
  if (o.left.data) o.left(i, j) = use.left;
  if (grad_stencil<Cost>::value == 1 && o.gx.data) p.cost.step_grad(p.x, p.y, i, j, use, o.gx, o.gy);
  return use;
}

/// The cell (i, t - i) of R in the store, +inf outside the band, 0 for the virtual origin.
template <class T>
RESILIN_HD RESILIN_INLINE T stored(diag_store<T> const& store, diag_span const& s, index_t t,
                                   index_t i) noexcept {
  if (s.contains(i)) return store.diag(t)[i];
  return (t == -2 && i == -1) ? T(0) : math::infinity<T>();
}

/// One backward step: A and G of the cells of diagonal t from G of diagonals t+1 and t+2;
/// with stencil 1 it also adds the cell's gradient.
template <class T, class Cost, class Smooth>
struct backward_step {
  grid_problem<T, Cost, Smooth> const* p;
  index_t t;
  diag_store<T> store;
  g_ring<T> g;
  T seed;
  backward_outputs<T> const* o;

  RESILIN_HD void operator()(int thread, int threads) const noexcept {
    index_t const n = p->x.length, m = p->y.length;
    band_geometry const& bg = p->band;
    diag_span const cur = diagonal(bg, t), n1 = diagonal(bg, t + 1), n2 = diagonal(bg, t + 2),
                    p1 = diagonal(bg, t - 1), p2 = diagonal(bg, t - 2);
    auto const gs = g.at_step(t);
    for (index_t i = cur.lo + thread; i <= cur.hi; i += threads) {
      index_t const j = t - i;
      T a = T(0);
      if (n1.contains(i + 1)) a += gs.up1[i + 1];    // (i+1, j) came up from (i, j)
      if (n1.contains(i)) a += gs.left1[i];          // (i, j+1) came left from (i, j)
      if (n2.contains(i + 1)) a += gs.diag2[i + 1];  // (i+1, j+1) came diagonally
      if (i == n - 1 && j == m - 1) a += seed;
      step3<T> const use = backward_cell(*p, i, j, a, p->cost.step(p->x, p->y, i, j),
                                         stored(store, p2, t - 2, i - 1),
                                         stored(store, p1, t - 1, i - 1),
                                         stored(store, p1, t - 1, i), *o);
      gs.up0[i] = use.up;
      gs.left0[i] = use.left;
      gs.diag0[i] = use.diag;
    }
  }
};

/// The gradient of the cells i = phase (mod grad_stencil) of diagonal t (stencil > 1).
template <class T, class Cost, class Smooth>
struct gradient_phase {
  grid_problem<T, Cost, Smooth> const* p;
  index_t t;
  g_ring<T> g;
  int phase;
  backward_outputs<T> const* o;

  RESILIN_HD void operator()(int thread, int threads) const noexcept {
    constexpr index_t s = grad_stencil<Cost>::value;
    diag_span const cur = diagonal(p->band, t);
    for (index_t i = cur.lo + thread; i <= cur.hi; i += threads) {
      if (i % s != phase) continue;
      step3<T> const use{g.diag(t)[i], g.up(t)[i], g.left(t)[i]};
      p->cost.step_grad(p->x, p->y, i, t - i, use, o->gx, o->gy);
    }
  }
};

/// Backward steps t1 down to t0 over R in `store`, with the G ring g (carried between calls).
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD void backward_steps(Exec const& ex, grid_problem<T, Cost, Smooth> const& p,
                               diag_store<T> const& store, g_ring<T> const& g, index_t t1,
                               index_t t0, T seed, backward_outputs<T> const& o) {
  constexpr int s = grad_stencil<Cost>::value;
  for (index_t t = t1; t >= t0; --t) {
    ex.for_each(backward_step<T, Cost, Smooth>{&p, t, store, g, seed, &o});
    ex.sync();
    if constexpr (s > 1) {
      if (o.gx.data) {
        for (int phase = 0; phase < s; ++phase) {
          ex.for_each(gradient_phase<T, Cost, Smooth>{&p, t, g, phase, &o});
          ex.sync();
        }
      }
    }
  }
}

/// The backward sweep of one problem by one block over the stored R. ring: 7 * stride values.
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD void backward_program(Exec const& ex, grid_problem<T, Cost, Smooth> const& p,
                                 diag_store<T> const& store, T* ring, index_t stride, T seed,
                                 backward_outputs<T> const& o) {
  backward_steps(ex, p, store, g_ring<T>{ring, stride}, p.x.length + p.y.length - 2, 0, seed, o);
}

/// to[v] = from[v] for v < count, strided over the threads.
template <class T>
struct copy_values {
  T const* from;
  T* to;
  index_t count;
  RESILIN_HD void operator()(int thread, int threads) const noexcept {
    for (index_t v = thread; v < count; v += threads) to[v] = from[v];
  }
};

/// The checkpointed backward: for each segment of k diagonals from the last, the forward of the
/// segment again from its two checkpoints (cp_store: the forward's checkpoint slots) into
/// `segment` (k + 2 slots: diagonals t0 - 2 .. t0 + k - 1), then its backward steps. The same
/// cells as the forward with the same arithmetic: R, and so every result, bit for bit as with
/// the whole grid stored. ring: 7 * stride values (the G ring).
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD void checkpointed_backward(Exec const& ex, grid_problem<T, Cost, Smooth> const& p,
                                      T const* cp_store, T* segment, checkpoints cp, T* ring,
                                      index_t stride, T seed, backward_outputs<T> const& o) {
  index_t const diagonals = p.x.length + p.y.length - 1, k = cp.interval;
  g_ring<T> const g{ring, stride};
  for (index_t s = cp.segments(diagonals) - 1; s >= 0; --s) {
    index_t const t0 = s * k, t1 = (t0 + k < diagonals ? t0 + k : diagonals) - 1;
    diag_store<T> const seg = diag_store<T>::slots(segment, stride, t0 - 2);
    if (s > 0) {  // the two diagonals before the segment, from the checkpoints
      ex.for_each(copy_values<T>{cp_store + cp.slot(t0 - 2) * stride, segment, 2 * stride});
      ex.sync();
    }
    for (index_t t = t0; t <= t1; ++t) {
      ex.for_each(forward_step<T, Cost, Smooth>{&p, t, seg, nullptr});
      ex.sync();
    }
    backward_steps(ex, p, seg, g, t1, t0, seed, o);
  }
}

// --- block programs (one block = one job) ------------------------------------------------------

/// Everything a value block needs; trivially copyable, passed to the kernel by value.
template <class T, class Cost, class Smooth>
struct value_args {
  Cost cost;
  Smooth smooth;
  device_band band;
  batch_view<T const> X;
  batch_view<T const> Y;
  job_layout layout;
  T* results;       // (job_count): the value of each job
  index_t stride;   // ring stride >= min(n, m) of every job
};

template <class T>
RESILIN_HD T quiet_nan() noexcept {
  return math::infinity<T>() - math::infinity<T>();
}

/// The series of a job, or a zero-length view when a per-series length is out of range.
template <class T>
RESILIN_HD series_view<T const> job_series(batch_view<T const> const& b, index_t s) noexcept {
  index_t const len = b.length(s);
  if (len < 1 || len > b.max_length) return {b.data, 0, b.channels};
  return {b.data + s * b.max_length * b.channels, len, b.channels};
}

/// The value of job k by `forward`, called with the job's grid_problem: the shorter series on
/// the rows (transposed_cost when that is y); NaN for a per-series length outside
/// [1, max_length].
template <class T, class Cost, class Smooth, class Forward>
RESILIN_HD T job_value(value_args<T, Cost, Smooth> const& a, index_t k, Forward&& forward) {
  job const jb = job_of(a.layout, k, a.X.batch, a.Y.batch);
  series_view<T const> const x = job_series(jb.x_from_y ? a.Y : a.X, jb.xs);
  series_view<T const> const y = job_series(jb.y_from_x ? a.X : a.Y, jb.ys);
  if (x.length == 0 || y.length == 0) return quiet_nan<T>();
  if (y.length < x.length) {
    return forward(grid_problem<T, transposed_cost<Cost>, Smooth>{
        {a.cost}, a.smooth, y, x, a.band.geometry(y.length, x.length)});
  }
  return forward(grid_problem<T, Cost, Smooth>{a.cost, a.smooth, x, y,
                                               a.band.geometry(x.length, y.length)});
}

/// Value of job k, in O(min(n, m)) memory: the shorter series is put on the rows.
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD void value_block(Exec const& ex, value_args<T, Cost, Smooth> const& a, index_t k,
                            T* ring) {
  T const v = job_value(a, k, [&](auto const& p) {
    return forward_program(ex, p, ring, a.stride, diag_store<T>{});
  });
  if (ex.leader()) a.results[k] = v;
}

// --- shuffle warp: short series, one warp per job, one row per lane ---------------------------
// For problems of at most 32 rows (the value path puts the shorter series on the rows), lane i
// owns row i: at step t it computes (i, t - i) from its own cell of step t - 1 (left) and lane
// i - 1's cells of steps t - 1 (up) and t - 2 (diag), passed by warp shuffles, in registers: no
// shared memory, no barrier. Training stores each cell into the whole grid as it goes, and the
// backward keeps G of the last two diagonals in registers the same way: lane i's cell of step t
// takes G.up and G.diag from lane i + 1 (shfl_down) and G.left from itself. Written against a
// warp type W (per-lane registers, shfl_up, shfl_down, broadcast, sync): the CUDA warp
// (backend/cuda/kernels.cuh) or emulated_warp above. Every cell is the same cell_value (and
// backward_cell, with its sums in the same order) as in the other programs: the same bits.

inline constexpr index_t shuffle_rows = 32;

/// The cell of lane i at step t, +inf outside the grid and the band.
template <class T, class Cost, class Smooth>
RESILIN_HD RESILIN_INLINE T shuffle_cell(grid_problem<T, Cost, Smooth> const& p, index_t t, int lane,
                                         T up, T diag, T left) noexcept {
  T const inf = math::infinity<T>();
  index_t const i = lane, j = t - lane;
  if (!diagonal(p.band, t).contains(i)) return inf;  // also j outside [0, m) and i >= n
  if (i == 0) {  // the row above the grid: +inf, but for the virtual origin R(-1, -1) = 0
    up = inf;
    diag = j == 0 ? T(0) : inf;
  }
  return cell_value(p.smooth, p.cost.step(p.x, p.y, i, j), diag, up, left);
}

/// The forward of one problem of at most shuffle_rows rows on warp w: R(n-1, m-1), every lane;
/// with a store (the whole grid), every cell of the band is also written there.
template <class T, class Cost, class Smooth, class Warp>
RESILIN_HD T shuffle_forward(Warp const& w, grid_problem<T, Cost, Smooth> const& p,
                             diag_store<T> store = {}) {
  using reg = typename Warp::template reg<T>;
  T const inf = math::infinity<T>();
  reg cur(inf), prev(inf), next(inf);
  index_t const last = p.x.length + p.y.length - 2;
  for (index_t t = 0; t <= last; ++t) {
    reg const up = w.shfl_up(cur), diag = w.shfl_up(prev);
    w.for_each_lane([&](int lane) {
      next.at(lane) = shuffle_cell(p, t, lane, up.at(lane), diag.at(lane), cur.at(lane));
      if (store.base && diagonal(p.band, t).contains(lane)) store.diag(t)[lane] = next.at(lane);
    });
    prev = cur;
    cur = next;
  }
  return w.broadcast(cur, static_cast<int>(p.x.length - 1));
}

/// The backward of one problem of at most shuffle_rows rows on warp w over the whole grid in
/// `store` (backward_step's cell, G in registers). The gradients of stencil-s costs are added
/// after each step in s phases of lanes (as gradient_phase), so that no two lanes write one
/// row; w.sync() orders the lanes' gradient writes between phases and steps.
template <class T, class Cost, class Smooth, class Warp>
RESILIN_HD void shuffle_backward(Warp const& w, grid_problem<T, Cost, Smooth> const& p,
                                 diag_store<T> const& store, T seed, backward_outputs<T> const& o) {
  using reg = typename Warp::template reg<T>;
  constexpr int s = grad_stencil<Cost>::value;
  index_t const n = p.x.length, m = p.y.length;
  band_geometry const& bg = p.band;
  reg up1(T(0)), left1(T(0)), diag1(T(0)), diag2(T(0));  // G of steps t + 1 and (diag) t + 2
  for (index_t t = n + m - 2; t >= 0; --t) {
    reg const up_below = w.shfl_down(up1), diag_below = w.shfl_down(diag2);
    reg up0(T(0)), left0(T(0)), diag0(T(0));
    diag_span const cur = diagonal(bg, t), n1 = diagonal(bg, t + 1), n2 = diagonal(bg, t + 2),
                    p1 = diagonal(bg, t - 1), p2 = diagonal(bg, t - 2);
    w.for_each_lane([&](int lane) {
      index_t const i = lane, j = t - i;
      if (!cur.contains(i)) return;  // G = 0 outside the band
      T a = T(0);
      if (n1.contains(i + 1)) a += up_below.at(lane);    // (i+1, j) came up from (i, j)
      if (n1.contains(i)) a += left1.at(lane);           // (i, j+1) came left from (i, j)
      if (n2.contains(i + 1)) a += diag_below.at(lane);  // (i+1, j+1) came diagonally
      if (i == n - 1 && j == m - 1) a += seed;
      step3<T> const use = backward_cell(p, i, j, a, p.cost.step(p.x, p.y, i, j),
                                         stored(store, p2, t - 2, i - 1),
                                         stored(store, p1, t - 1, i - 1),
                                         stored(store, p1, t - 1, i), o);
      up0.at(lane) = use.up;
      left0.at(lane) = use.left;
      diag0.at(lane) = use.diag;
    });
    if constexpr (s > 1) {
      if (o.gx.data) {
        for (int phase = 0; phase < s; ++phase) {
          w.sync();
          w.for_each_lane([&](int lane) {
            if (!cur.contains(lane) || lane % s != phase) return;
            step3<T> const use{diag0.at(lane), up0.at(lane), left0.at(lane)};
            p.cost.step_grad(p.x, p.y, lane, t - lane, use, o.gx, o.gy);
          });
        }
      }
    }
    w.sync();  // this step's gradient writes before the next step's (rows i and i - 1 meet)
    diag2 = diag1;
    diag1 = diag0;
    up1 = up0;
    left1 = left0;
  }
}

/// Value of job k (at most shuffle_rows rows once oriented) on one warp, by shuffles.
template <class T, class Cost, class Smooth, class Warp>
RESILIN_HD void value_shuffle_block(Warp const& w, value_args<T, Cost, Smooth> const& a, index_t k) {
  T const v = job_value(a, k, [&](auto const& p) { return shuffle_forward(w, p); });
  if (w.leader()) a.results[k] = v;
}

// --- strip warp: many medium pairs (values), one warp per job, a strip of rows per lane -------
// For value jobs of 33 to 992 rows (the shorter series) in large batches, the cuDTW++ layout:
// lane l owns the S consecutive rows [l S, l S + S) and at step t sweeps column j = t - l of
// them top to bottom, keeping R(i, j - 1) of its rows (in registers for univariate hard DTW,
// else in the lane's local memory: strip_in_registers). Its top cell takes up and diag from
// lane l - 1's bottom cells of columns j (sent at step t - 1) and j - 1 (sent at step t - 2,
// kept), so a step is S cells and one shuffle, and no barrier: m + lanes - 1 steps in all.
// The rows series can be staged in shared memory (value_plan::stage_values); lane l reads it
// at stride S, so a staged job takes S = ceil(rows / 32) raised by one where that is a
// multiple of 4 (4- to 16-way bank conflicts; S = 2 mod 4 leaves 2-way ones, cheaper than the
// longer strips). Univariate jobs run with the channel count a compile-time 1
// (univariate_cost; with_univariate picks that kernel). Every cell is the same cell_value of the
// same operands as in the other programs: the same bits.

inline constexpr int strip_max_rows_per_lane = 31;
inline constexpr index_t strip_rows = 32 * strip_max_rows_per_lane;  // the most rows of a job

/// Rows per lane of a job of `rows` rows (at most strip_rows): ceil(rows / 32), and for a
/// staged rows series not a multiple of 4 (at most 31 either way).
RESILIN_HD constexpr int strip_rows_per_lane(index_t rows, bool staged) noexcept {
  int s = static_cast<int>((rows + 31) / 32);
  if (s < 1) s = 1;
  return staged && s % 4 == 0 ? s + 1 : s;
}

/// The in-band rows [lo, hi] of column j, walked one column at a time: from column j to j + 1
/// both bounds of |i (m - 1) - j (n - 1)| <= W move by (n - 1) / (m - 1), at most one row
/// when the rows are the shorter series, so no division after the first column. An Itakura
/// band's columns are the rows of its transpose (the band is symmetric), computed per column
/// (its fields then hold the column, n and m; one more for the slope keeps the lane small).
struct band_column_walk {
  index_t lo = 0, hi = 0;          // unclamped bounds of the current column (banded), or the grid's
  index_t lo_key = 0, hi_key = 0;  // j (n - 1) - W and j (n - 1) + W; Itakura: lo_key = j
  index_t rows_step = 0, cols_step = 0;  // n - 1 and m - 1 (0: not banded); Itakura: n and m
  index_t slope = 0;               // > 0: an Itakura band of this scaled slope

  static RESILIN_HD constexpr band_column_walk first(band_geometry const& g) noexcept {
    if (g.itakura()) {
      index_range const r = band_geometry::make_itakura(g.m, g.n, g.slope).row(0);
      return {r.lo, r.hi, 0, 0, g.n, g.m, g.slope};
    }
    if (!g.banded()) return {0, g.n - 1, 0, 0, 0, 0, 0};
    index_t const W = g.half_width;
    return {detail::ceil_div(-W, g.m - 1), detail::floor_div(W, g.m - 1), -W, W, g.n - 1, g.m - 1, 0};
  }
  RESILIN_HD constexpr void advance() noexcept {
    if (slope > 0) {
      index_range const r = band_geometry::make_itakura(cols_step, rows_step, slope).row(++lo_key);
      lo = r.lo;
      hi = r.hi;
      return;
    }
    if (cols_step == 0) return;
    lo_key += rows_step;
    hi_key += rows_step;
    while (lo * cols_step < lo_key) ++lo;
    while ((hi + 1) * cols_step <= hi_key) ++hi;
  }
};

/// A cost model's steps on univariate series, the channel count a constant 1 (the same
/// arithmetic: the same bits), so that the cells' code has no channel loop.
template <class Cost>
struct univariate_cost {
  Cost inner;
  template <class T>
  RESILIN_HD RESILIN_INLINE step3<T> step(series_view<T const> x, series_view<T const> y, index_t i,
                                          index_t j) const noexcept {
    return inner.step(series_view<T const>{x.data, x.length, 1}, series_view<T const>{y.data, y.length, 1}, i, j);
  }
};

/// Whether a strip keeps its rows' R in registers, the cell loop unrolled (univariate hard DTW,
/// whose cells are a few instructions: H1), or in local memory (every other cost model, whose
/// cells' arithmetic outweighs two L1 accesses, and of which 31 unrolled copies per orientation
/// and kernel took nvcc 2.4 x as long on the CUDA tests).
template <class Cost, class Smooth>
struct strip_in_registers : std::false_type {};
template <class D>
struct strip_in_registers<univariate_cost<dtw_cost<D>>, hard_min> : std::true_type {};
template <class D>
struct strip_in_registers<univariate_cost<transposed_cost<dtw_cost<D>>>, hard_min> : std::true_type {};

/// One lane's state: R of its rows in the last column it swept, lane l - 1's bottom cell of the
/// column before (the next column's diag for the top row) and the band of its next column.
template <class T>
struct strip_lane {
  T left[strip_max_rows_per_lane];
  T diag;
  band_column_walk band;
};

/// Column j of the rows [r0, r0 + S) of a lane, from the cell above r0 (up) and its left
/// neighbour (diag); returns the bottom cell.
template <class T, class Cost, class Smooth>
RESILIN_HD RESILIN_INLINE T strip_column(grid_problem<T, Cost, Smooth> const& p, int S, index_t r0,
                                         index_t j, T up, T diag, strip_lane<T>& L) noexcept {
  T const inf = math::infinity<T>();
  // the lane's in-band, in-grid rows of column j, as offsets first..last from r0
  index_t const lo = L.band.lo - r0;
  index_t const hi = (L.band.hi < p.x.length - 1 ? L.band.hi : p.x.length - 1) - r0;
  int const first = lo < 0 ? 0 : (lo > S ? S : static_cast<int>(lo));
  int const last = hi < 0 ? -1 : (hi >= S ? S - 1 : static_cast<int>(hi));
  auto const cell = [&](int s) {
    T const left = L.left[s];
    T v = inf;
    if (first <= s && s <= last) v = cell_value(p.smooth, p.cost.step(p.x, p.y, r0 + s, j), diag, up, left);
    L.left[s] = v;
    diag = left;
    up = v;
  };
  if constexpr (strip_in_registers<Cost, Smooth>::value) {
RESILIN_DEVICE_UNROLL
    for (int s = 0; s < strip_max_rows_per_lane; ++s) {
      if (s >= S) break;
      cell(s);
    }
  } else {
RESILIN_DEVICE_NO_UNROLL
    for (int s = 0; s < S; ++s) cell(s);
  }
  return up;
}

/// The forward of one problem of at most strip_rows rows on warp w: R(n-1, m-1), every lane
/// (NaN past strip_rows); `staged`: the rows series is in shared memory.
template <class T, class Cost, class Smooth, class Warp>
RESILIN_HD T strip_forward(Warp const& w, grid_problem<T, Cost, Smooth> const& p, bool staged) {
  using reg = typename Warp::template reg<T>;
  using lanes = typename Warp::template reg<strip_lane<T>>;
  T const inf = math::infinity<T>();
  index_t const n = p.x.length, m = p.y.length;
  if (n > strip_rows) return quiet_nan<T>();  // value_plan never sends such a job here
  int const S = strip_rows_per_lane(n, staged);
  index_t const used = (n + S - 1) / S;  // lanes that own rows
  strip_lane<T> start{};
  for (auto& v : start.left) v = inf;
  start.diag = inf;
  start.band = band_column_walk::first(p.band);
  lanes st(start);
  reg bottom(inf);
  for (index_t t = 0; t < m + used - 1; ++t) {
    reg const up = w.shfl_up(bottom);
    w.for_each_lane([&](int lane) {
      strip_lane<T>& L = st.at(lane);
      index_t const j = t - lane;
      T u = up.at(lane), d = L.diag;
      L.diag = u;
      if (j < 0 || j >= m || lane >= used) return;
      if (lane == 0) {  // the row above the grid: +inf, but for the virtual origin R(-1, -1) = 0
        u = inf;
        d = j == 0 ? T(0) : inf;
      }
      bottom.at(lane) = strip_column(p, S, lane * static_cast<index_t>(S), j, u, d, L);
      L.band.advance();
    });
  }
  // the last cell is row (n - 1) % S of lane (n - 1) / S, whose left[] holds column m - 1
  int const owner = static_cast<int>((n - 1) / S), row = static_cast<int>((n - 1) % S);
  reg last(inf);
  w.for_each_lane([&](int lane) {
    if (lane != owner) return;
RESILIN_DEVICE_UNROLL
    for (int s = 0; s < strip_max_rows_per_lane; ++s)
      if (s == row) last.at(lane) = st.at(lane).left[s];
  });
  return w.broadcast(last, owner);
}

/// Value of job k (at most strip_rows rows once oriented) on one warp, a strip of rows per
/// lane. stage: the warp's stage_values of shared memory, or null; the rows series is copied
/// there when it fits. Univariate: the batches have one channel (the cells' code then has no
/// channel loop; a separate kernel, so that the multichannel code's registers do not bound it).
template <bool Univariate, class T, class Cost, class Smooth, class Warp>
RESILIN_HD void value_strip_block(Warp const& w, value_args<T, Cost, Smooth> const& a, index_t k,
                                  T* stage, index_t stage_values) {
  T const v = job_value(a, k, [&](auto p) {
    index_t const values = p.x.length * p.x.channels;
    bool const staged = stage && values <= stage_values;
    if (staged) {
      w.for_each_lane([&](int lane) {
        for (index_t q = lane; q < values; q += 32) stage[q] = p.x.data[q];
      });
      w.sync();
      p.x.data = stage;
    }
    if constexpr (Univariate) {
      return strip_forward(w, grid_problem<T, univariate_cost<decltype(p.cost)>, decltype(p.smooth)>{
                                  {p.cost}, p.smooth, p.x, p.y, p.band}, staged);
    } else {
      return strip_forward(w, p, staged);
    }
  });
  if (w.leader()) a.results[k] = v;
}

/// Calls f(std::true_type{}) for batches of one channel (value_strip_block<true>: the
/// univariate kernel), else f(std::false_type{}); returns what f returns.
template <class F>
decltype(auto) with_univariate(index_t channels, F&& f) {
  if (channels == 1) return f(std::true_type{});
  return f(std::false_type{});
}

// --- tiled wavefront: a few very long pairs ---------------------------------------------------
// One CTA per pair leaves most of the GPU idle when there are only a few long pairs. Here the
// grid of a job is cut into tiles of tile_size x tile_size cells; the tiles of one tile
// anti-diagonal D = a + b are independent and run on separate CTAs (one launch per D for all
// jobs), each sweeping its tile's own cell anti-diagonals with one row per thread. Tiles pass
// only their borders on, through three rotating copies (D mod 3) of a row buffer (each tile's
// bottom row) and a column buffer (its right column), both indexed by the tile's position on
// its diagonal (k = a - first(D)), so that they hold at most min(rows, cols) tiles: a tile on D
// reads what D - 1 wrote (top row, left column) and one corner from D - 2, and no tile of D
// writes what another reads. O(min(n, m)) memory per job; every cell is the same cell_value as
// in the other traversals, so the value has the same bits.

inline constexpr index_t tile_size = 128;  // rows (threads) and columns of a tile
inline constexpr index_t max_tiled_jobs = 65535;  // the launch's grid.y

/// The border buffers of one job: for D mod 3, a row buffer (the bottom rows of the tiles of
/// diagonal D, tile k at k tile_size) and a column buffer (their right columns, likewise); room
/// for `per_diagonal` tiles each.
template <class T>
struct tile_borders {
  T* base;
  index_t per_diagonal;  // >= the most tiles on one diagonal of the job's grid
  RESILIN_HD T* rows(index_t d, index_t k) const noexcept {
    return base + ((d % 3) * per_diagonal + k) * tile_size;
  }
  RESILIN_HD T* cols(index_t d, index_t k) const noexcept {
    return base + ((3 + d % 3) * per_diagonal + k) * tile_size;
  }
  static RESILIN_HD constexpr index_t values(index_t per_diagonal) noexcept {
    return 6 * per_diagonal * tile_size;
  }
};

/// Tiles of an (n, m) grid: rows of tiles, columns of tiles, and the tiles of diagonal D.
struct tile_grid {
  index_t rows = 0, cols = 0;
  static RESILIN_HD constexpr tile_grid of(index_t n, index_t m) noexcept {
    return {(n + tile_size - 1) / tile_size, (m + tile_size - 1) / tile_size};
  }
  RESILIN_HD constexpr index_t diagonals() const noexcept { return rows + cols - 1; }
  /// The first tile row on diagonal D (tile k of D is (first + k, D - first - k)).
  RESILIN_HD constexpr index_t first(index_t d) const noexcept { return d - (cols - 1) > 0 ? d - (cols - 1) : 0; }
  RESILIN_HD constexpr index_t count(index_t d) const noexcept {
    index_t const last = d < rows - 1 ? d : rows - 1;
    return d < 0 || d >= diagonals() ? 0 : last - first(d) + 1;
  }
};

/// The launches of a tiled call: tile diagonals, and CTAs per job and launch (the most tiles of
/// one diagonal), over its grids: (n, m) of either orientation for n <= nmax, m <= mmax, and
/// (n, n) and (m, m) with the divergence.
struct tile_launches {
  index_t diagonals = 0, per_diagonal = 0;
  static RESILIN_HD constexpr tile_launches of(index_t nmax, index_t mmax, bool divergence) noexcept {
    index_t const tn = tile_grid::of(nmax, 1).rows, tm = tile_grid::of(mmax, 1).rows;
    index_t const big = tn > tm ? tn : tm, small = tn < tm ? tn : tm;
    if (divergence) return {2 * big - 1, big};
    return {tn + tm - 1, small};
  }
};

/// Where tile k of tile diagonal D lies in an (n, m) grid: tile (a, b), first cell (i0, j0),
/// h x w cells; valid is false when the diagonal has fewer tiles.
struct tile_place {
  index_t a = 0, b = 0, i0 = 0, j0 = 0, h = 0, w = 0;
  bool valid = false;
  static RESILIN_HD constexpr tile_place of(index_t n, index_t m, index_t d, index_t k) noexcept {
    tile_grid const tg = tile_grid::of(n, m);
    tile_place t;
    if (k >= tg.count(d)) return t;
    t.a = tg.first(d) + k;
    t.b = d - t.a;
    t.i0 = t.a * tile_size;
    t.j0 = t.b * tile_size;
    t.h = n - t.i0 < tile_size ? n - t.i0 : tile_size;
    t.w = m - t.j0 < tile_size ? m - t.j0 : tile_size;
    t.valid = true;
    return t;
  }
  RESILIN_HD constexpr index_t last_step() const noexcept { return h + w - 2; }
  /// R(i0 - 1, j0 - 1): 0 at the virtual origin, +inf outside the grid, else above_left()
  /// (asked only then: the cell lies in the tile (a - 1, b - 1), a full tile).
  template <class T, class AboveLeft>
  RESILIN_HD T corner(AboveLeft const& above_left) const noexcept {
    if (a == 0 && b == 0) return T(0);
    return a > 0 && b > 0 ? above_left() : math::infinity<T>();
  }
  /// The tile's local rows on its cell diagonal s: [lo, hi].
  RESILIN_HD constexpr diag_span rows(index_t s) const noexcept {
    return {s - (w - 1) > 0 ? s - (w - 1) : 0, s < h - 1 ? s : h - 1};
  }
};

// --- distance tiles: large d --------------------------------------------------------------------
// For cost models whose three moves all cost one of the library's point distances delta(x_i,
// y_j) (dtw_cost of a vector_distance, also transposed), a tile computes its distances first,
// as a small matrix product in shared memory: x and y staged a chunk of channels at a time
// (channel-major), each thread 8 rows x 4 columns of distances (the columns 32 apart, so a warp
// reads x by broadcast and y and the tile without bank conflicts), a staged value feeding 4 or
// 8 multiply-adds instead of one; the sweeps then read one value per cell. Each distance adds
// the channels in order by Distance::accumulate, as Distance::value does (its fma written out),
// so every cell keeps its bits whatever the compiler contracts. Used from
// distance_tile_min_channels channels on (below, the per-cell distance is cheap).

template <class Cost>
struct tile_distance : std::false_type {};
template <vector_distance D>
struct tile_distance<dtw_cost<D>> : std::true_type {
  using distance = D;
  static constexpr bool swapped = false;  // delta(x_i, y_j)
};
template <vector_distance D>
struct tile_distance<transposed_cost<dtw_cost<D>>> : std::true_type {
  using distance = D;
  static constexpr bool swapped = true;   // delta(y_j, x_i): the rows are the columns' series
};

inline constexpr index_t distance_tile_min_channels = 16;
inline constexpr index_t distance_chunk = 8;                     // channels staged per pass
inline constexpr index_t distance_block_rows = 8, distance_block_cols = 4;  // 4 x 32 = tile_size

/// Shared-memory values of a distance tile: the distances, then the two staged chunks.
constexpr index_t distance_tile_values() noexcept {
  return tile_size * tile_size + 2 * tile_size * distance_chunk;
}

/// Whether the tiled programs of a Cost use distance tiles for series of `channels` channels.
template <class Cost>
constexpr bool uses_distance_tiles(index_t channels) noexcept {
  return tile_distance<Cost>::value && channels >= distance_tile_min_channels;
}

/// Stages channels [c0, c0 + cc) of rows [first, first + count) of s into out, channel-major
/// (distance_chunk channels of tile_size rows; rows past count and channels past cc are zero).
template <class T>
struct stage_chunk {
  series_view<T const> s;
  index_t first, count, c0, cc;
  T* out;
  RESILIN_HD void operator()(int thread, int threads) const noexcept {
    for (index_t v = thread; v < tile_size * distance_chunk; v += threads) {
      index_t const c = v / tile_size, r = v - c * tile_size;
      out[v] = r < count && c < cc ? s(first + r, c0 + c) : T(0);
    }
  }
};

/// Adds the staged chunk's cc channels to the register blocks of distances (first chunk: from 0).
template <class T, class Cost>
struct accumulate_distances {
  T const* xs;
  T const* ys;
  T* dist;
  index_t h, cc;  // rows of the tile (every column is computed: those past its width are unused)
  bool first;
  RESILIN_HD void operator()(int thread, int threads) const noexcept {
    using D = typename tile_distance<Cost>::distance;
    constexpr index_t BR = distance_block_rows, BC = distance_block_cols, lanes = tile_size / BC;
    // block blk: rows r0 .. r0 + BR - 1, columns lane + lanes q (q < BC); consecutive threads
    // take consecutive lanes (columns) of one row block
    index_t const blocks = (h + BR - 1) / BR * lanes;
    for (index_t blk = thread; blk < blocks; blk += threads) {
      index_t const r0 = blk / lanes * BR, lane = blk % lanes;
      T acc[BR][BC];
      for (index_t r = 0; r < BR; ++r)
        for (index_t q = 0; q < BC; ++q)
          acc[r][q] = first ? T(0) : dist[(r0 + r) * tile_size + lane + lanes * q];
      for (index_t c = 0; c < cc; ++c) {
        T xv[BR], yv[BC];
        for (index_t r = 0; r < BR; ++r) xv[r] = xs[c * tile_size + r0 + r];
        for (index_t q = 0; q < BC; ++q) yv[q] = ys[c * tile_size + lane + lanes * q];
        for (index_t r = 0; r < BR; ++r)
          for (index_t q = 0; q < BC; ++q) {
            if constexpr (tile_distance<Cost>::swapped) acc[r][q] = D::accumulate(acc[r][q], yv[q] - xv[r]);
            else acc[r][q] = D::accumulate(acc[r][q], xv[r] - yv[q]);
          }
      }
      for (index_t r = 0; r < BR; ++r)
        for (index_t q = 0; q < BC; ++q) dist[(r0 + r) * tile_size + lane + lanes * q] = acc[r][q];
    }
  }
};

/// delta of every cell of tile tp into buf[0, tile_size^2) (row-major, local indices); the rest
/// of buf stages the channel chunks.
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD void tile_distances(Exec const& ex, grid_problem<T, Cost, Smooth> const& p,
                               tile_place const& tp, T* buf) {
  if constexpr (tile_distance<Cost>::value) {
    T* const xs = buf + tile_size * tile_size;
    T* const ys = xs + tile_size * distance_chunk;
    index_t const d = p.x.channels;
    for (index_t c0 = 0; c0 < d; c0 += distance_chunk) {
      index_t const cc = d - c0 < distance_chunk ? d - c0 : distance_chunk;
      ex.for_each(stage_chunk<T>{p.x, tp.i0, tp.h, c0, cc, xs});
      ex.for_each(stage_chunk<T>{p.y, tp.j0, tp.w, c0, cc, ys});
      ex.sync();
      ex.for_each(accumulate_distances<T, Cost>{xs, ys, buf, tp.h, cc, c0 == 0});
      ex.sync();
    }
  } else {
    (void)ex, (void)p, (void)tp, (void)buf;
  }
}

/// The step costs of cell (i, j) = (i0 + li, j0 + lj): from the distance tile, or the cost model.
template <class T, class Cost, class Smooth>
RESILIN_HD RESILIN_INLINE step3<T> tile_cost(grid_problem<T, Cost, Smooth> const& p, T const* dist,
                                             index_t li, index_t lj, index_t i, index_t j) noexcept {
  if constexpr (tile_distance<Cost>::value) {
    if (dist) {
      T const d = dist[li * tile_size + lj];
      return {d, d, d};
    }
  }
  (void)dist, (void)li, (void)lj;
  return p.cost.step(p.x, p.y, i, j);
}

/// Where a tile sweep also puts every cell it computes (each member optional): the whole-grid
/// store (anti-diagonal-major) or a scratch tile (row-major, tile_size x tile_size).
template <class T>
struct tile_cells {
  diag_store<T> grid{};
  T* local = nullptr;
};

/// The R borders a tile sweep starts from (null top / left: outside the grid, +inf) and the
/// ones it leaves for the next tiles (null: not kept).
template <class T>
struct tile_edges {
  T const* top = nullptr;   // R(i0 - 1, j0 + lj)
  T const* left = nullptr;  // R(i0 + li, j0 - 1)
  T corner = T(0);          // R(i0 - 1, j0 - 1)
  T* bottom = nullptr;      // R(i0 + h - 1, j0 + lj) out
  T* right = nullptr;       // R(i0 + li, j0 + w - 1) out
};

/// One cell anti-diagonal s of a tile: from the tile's 3-ring (local rows) and its edges.
template <class T, class Cost, class Smooth>
struct tile_step {
  grid_problem<T, Cost, Smooth> const* p;
  tile_place tp;
  index_t s;
  T* ring;             // 3 * tile_size values: local diagonal s at (s % 3) * tile_size
  tile_edges<T> e;
  tile_cells<T> out;
  T const* dist;       // the tile's distances (distance tiles), or null

  RESILIN_HD void operator()(int thread, int threads) const noexcept {
    T const inf = math::infinity<T>();
    T* const c = ring + (s % 3) * tile_size;
    T const* const r1 = ring + ((s + 2) % 3) * tile_size;
    T const* const r2 = ring + ((s + 1) % 3) * tile_size;
    diag_span const span = tp.rows(s);
    for (index_t li = span.lo + thread; li <= span.hi; li += threads) {
      index_t const lj = s - li, i = tp.i0 + li, j = tp.j0 + lj;
      T r = inf;
      if (p->band.contains(i, j)) {
        T const up = li > 0 ? r1[li - 1] : (e.top ? e.top[lj] : inf);
        T const lft = lj > 0 ? r1[li] : (e.left ? e.left[li] : inf);
        T diag;
        if (li > 0 && lj > 0) diag = r2[li - 1];
        else if (li == 0) diag = lj == 0 ? e.corner : (e.top ? e.top[lj - 1] : inf);
        else diag = e.left ? e.left[li - 1] : inf;
        r = cell_value(p->smooth, tile_cost(*p, dist, li, lj, i, j), diag, up, lft);
      }
      c[li] = r;
      if (e.bottom && li == tp.h - 1) e.bottom[lj] = r;
      if (e.right && lj == tp.w - 1) e.right[li] = r;
      if (out.grid.base) out.grid.diag(i + j)[i] = r;
      if (out.local) out.local[li * tile_size + lj] = r;
    }
  }
};

/// The forward sweep of one tile by one block; returns the tile's last cell, R(i0 + h - 1,
/// j0 + w - 1). ring: 3 * tile_size values; distances: null, or distance_tile_values() values
/// (the tile's distances are computed first and left there, for a dtw_cost problem).
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD T tile_sweep(Exec const& ex, grid_problem<T, Cost, Smooth> const& p, tile_place const& tp,
                        tile_edges<T> const& e, T* ring, tile_cells<T> out = {},
                        T* distances = nullptr) {
  if (distances) tile_distances(ex, p, tp, distances);
  for (index_t s = 0; s <= tp.last_step(); ++s) {
    ex.for_each(tile_step<T, Cost, Smooth>{&p, tp, s, ring, e, out, distances});
    ex.sync();
  }
  return ring[(tp.last_step() % 3) * tile_size + (tp.h - 1)];
}

/// Tile k of diagonal D of one problem by one block; returns R(n-1, m-1) when this tile holds
/// that cell (else +inf). ring: 3 * tile_size values; distances: as for tile_sweep.
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD T tile_program(Exec const& ex, grid_problem<T, Cost, Smooth> const& p,
                          tile_borders<T> const& bd, index_t d, index_t k, T* ring,
                          T* distances = nullptr) {
  index_t const n = p.x.length, m = p.y.length;
  tile_place const tp = tile_place::of(n, m, d, k);
  T const inf = math::infinity<T>();
  if (!tp.valid) return inf;
  // the neighbours' places on their diagonals: (a - 1, b) and (a, b - 1) on D - 1, (a - 1,
  // b - 1) on D - 2 (a full tile: its last column is j0 - 1)
  tile_grid const tg = tile_grid::of(n, m);
  tile_edges<T> e;
  if (tp.a > 0) e.top = bd.rows(d - 1, tp.a - 1 - tg.first(d - 1));
  if (tp.b > 0) e.left = bd.cols(d - 1, tp.a - tg.first(d - 1));
  e.corner = tp.corner<T>([&] { return bd.rows(d - 2, tp.a - 1 - tg.first(d - 2))[tile_size - 1]; });
  e.bottom = bd.rows(d, k);
  e.right = bd.cols(d, k);
  T const last = tile_sweep(ex, p, tp, e, ring, {}, distances);
  return tp.i0 + tp.h == n && tp.j0 + tp.w == m ? last : inf;
}

/// Everything a tiled value launch needs (value_args plus the border buffers).
template <class T, class Cost, class Smooth>
struct tiled_args {
  value_args<T, Cost, Smooth> v;
  T* borders;               // jobs * tile_borders::values(per_diagonal)
  index_t per_diagonal;     // the most tiles on one diagonal of any job's grid
};

/// Tile k of diagonal D of job `job` (the value path's orientation: the shorter series on the
/// rows); the block holding the job's last cell writes its value. distances: null, or
/// distance_tile_values() values when uses_distance_tiles.
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD void tiled_value_block(Exec const& ex, tiled_args<T, Cost, Smooth> const& a,
                                  index_t jk, index_t d, index_t k, T* ring,
                                  T* distances = nullptr) {
  value_args<T, Cost, Smooth> const& v = a.v;
  job const jb = job_of(v.layout, jk, v.X.batch, v.Y.batch);
  series_view<T const> const x = job_series(jb.x_from_y ? v.Y : v.X, jb.xs);
  series_view<T const> const y = job_series(jb.y_from_x ? v.X : v.Y, jb.ys);
  if (x.length == 0 || y.length == 0) {  // a per-series length outside [1, max_length]
    if (d == 0 && k == 0 && ex.leader()) v.results[jk] = quiet_nan<T>();
    return;
  }
  tile_borders<T> const bd{a.borders + jk * tile_borders<T>::values(a.per_diagonal), a.per_diagonal};
  T value;
  bool last;
  if (y.length < x.length) {
    grid_problem<T, transposed_cost<Cost>, Smooth> const p{
        {v.cost}, v.smooth, y, x, v.band.geometry(y.length, x.length)};
    tile_grid const tg = tile_grid::of(y.length, x.length);
    last = d == tg.diagonals() - 1 && k == 0;
    value = tile_program(ex, p, bd, d, k, ring, distances);
  } else {
    grid_problem<T, Cost, Smooth> const p{v.cost, v.smooth, x, y,
                                          v.band.geometry(x.length, y.length)};
    tile_grid const tg = tile_grid::of(x.length, y.length);
    last = d == tg.diagonals() - 1 && k == 0;
    value = tile_program(ex, p, bd, d, k, ring, distances);
  }
  if (last && ex.leader()) v.results[jk] = value;
}

/// Everything a training block (forward storing R, then backward) needs.
template <class T, class Cost, class Smooth>
struct train_args {
  Cost cost;
  Smooth smooth;
  device_band band;
  batch_view<T const> X;
  batch_view<T const> Y;
  T* results;             // (3 * batch) or (batch): value of each job
  T const* upstream;      // (batch) or null: ones
  T* store;               // R slots: job p, pair b at store + slot_offset[p] + b * slot_size[p]
  index_t slot_offset[3];
  index_t slot_size[3];
  index_t stride;         // ring stride >= rows of every job
  index_t checkpoint;     // 0: each job stores its whole grid; else the interval k of the
                          // checkpointed mode (a job's slot: segment, then checkpoints)
  // gradients: job 0 -> (gx0, gy0); job 1 -> (gx1, gx2); job 2 -> (gy1, gy2); each (batch,
  // max_length, channels); null data: no gradient.
  T* gx0;
  T* gy0;
  T* gx1;
  T* gx2;
  T* gy1;
  T* gy2;
  T* e;                   // (batch, X.max_length, Y.max_length) or null; job 0 only
};

/// One training job as its block programs see it: the problem, its slot of the store, the
/// backward's seed and outputs; not valid for a per-series length outside [1, max_length].
template <class T, class Cost, class Smooth>
struct train_job {
  bool valid = false;
  grid_problem<T, Cost, Smooth> p{};
  T* slot = nullptr;
  T seed = T(0);
  backward_outputs<T> o{};
  RESILIN_HD bool wants_backward() const noexcept { return o.gx.data || o.e.data; }
};

/// Job k = p * batch + b of a training launch (jobs as in job_of, paired).
template <class T, class Cost, class Smooth>
RESILIN_HD train_job<T, Cost, Smooth> train_job_of(train_args<T, Cost, Smooth> const& a, index_t k) {
  train_job<T, Cost, Smooth> j;
  job const jb = job_of(job_layout::paired, k, a.X.batch, a.Y.batch);
  index_t const b = jb.xs;
  series_view<T const> const x = job_series(jb.x_from_y ? a.Y : a.X, jb.xs);
  series_view<T const> const y = job_series(jb.y_from_x ? a.X : a.Y, jb.ys);
  // a divergence's self terms run only where the pair itself is valid: with X[b] out of range,
  // (Y[b], Y[b]) added -dS(y,y)/dy / 2 to GY[b] beside a NaN value
  if (x.length == 0 || y.length == 0 || job_series(a.X, b).length == 0 || job_series(a.Y, b).length == 0)
    return j;
  j.valid = true;
  j.p = {a.cost, a.smooth, x, y,
         a.band.geometry(x.length, y.length)};
  j.slot = a.store + a.slot_offset[jb.problem] + b * a.slot_size[jb.problem];
  T const u = a.upstream ? a.upstream[b] : T(1);
  j.seed = jb.problem == 0 ? u : -u / T(2);
  index_t const xrow = a.X.max_length * a.X.channels, yrow = a.Y.max_length * a.Y.channels;
  T* gx = nullptr;
  T* gy = nullptr;
  if (jb.problem == 0) {
    gx = a.gx0 ? a.gx0 + b * xrow : nullptr;
    gy = a.gy0 ? a.gy0 + b * yrow : nullptr;
    if (a.e) j.o.e = {a.e + b * a.X.max_length * a.Y.max_length, a.X.max_length, a.Y.max_length};
  } else if (jb.problem == 1) {
    gx = a.gx1 ? a.gx1 + b * xrow : nullptr;
    gy = a.gx2 ? a.gx2 + b * xrow : nullptr;
  } else {
    gx = a.gy1 ? a.gy1 + b * yrow : nullptr;
    gy = a.gy2 ? a.gy2 + b * yrow : nullptr;
  }
  if (gx && gy) {
    j.o.gx = {gx, x.length, x.channels};
    j.o.gy = {gy, y.length, y.channels};
  }
  return j;
}

/// Training job k on one warp by shuffles (train_plan::shuffle: at most shuffle_rows rows, R
/// stored whole): the forward storing R, then the backward; no ring.
template <class T, class Cost, class Smooth, class Warp>
RESILIN_HD void train_shuffle_block(Warp const& w, train_args<T, Cost, Smooth> const& a, index_t k) {
  train_job<T, Cost, Smooth> const j = train_job_of(a, k);
  if (!j.valid) {
    if (w.leader()) a.results[k] = quiet_nan<T>();
    return;
  }
  diag_store<T> const grid = diag_store<T>::grid(j.slot, j.p.x.length, j.p.y.length);
  T const v = shuffle_forward(w, j.p, grid);
  if (w.leader()) a.results[k] = v;
  if (!j.wants_backward()) return;
  w.sync();  // the stored cells before the lanes read each other's
  shuffle_backward(w, j.p, grid, j.seed, j.o);
}

/// Forward (storing R, or its checkpoints) then backward of job k = p * batch + b. The ring
/// holds max(3, 7) * stride values and is reused by the backward.
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD void train_block(Exec const& ex, train_args<T, Cost, Smooth> const& a, index_t k,
                            T* ring) {
  train_job<T, Cost, Smooth> const j = train_job_of(a, k);
  if (!j.valid) {
    if (ex.leader()) a.results[k] = quiet_nan<T>();
    return;
  }
  index_t const n = j.p.x.length, m = j.p.y.length;
  checkpoints const cp{a.checkpoint};
  T* const cp_store = j.slot + (cp.interval + 2) * a.stride;  // after the segment (checkpointed)
  T const v = forward_program(ex, j.p, ring, a.stride,
                              cp.interval ? diag_store<T>::slots(cp_store, a.stride, 0)
                                          : diag_store<T>::grid(j.slot, n, m),
                              cp);
  if (ex.leader()) a.results[k] = v;
  ex.sync();  // every thread has read v before the ring is reused
  if (!j.wants_backward()) return;
  if (cp.interval)
    checkpointed_backward(ex, j.p, static_cast<T const*>(cp_store), j.slot, cp, ring, a.stride,
                          j.seed, j.o);
  else
    backward_program(ex, j.p, diag_store<T>::grid(j.slot, n, m), ring, a.stride, j.seed, j.o);
}

// --- tiled training: a few very long pairs ----------------------------------------------------
// The tiled wavefront for values_and_grads and the alignment matrices. The forward runs the
// tiles as the value path does (one launch per tile diagonal) and keeps each tile's bottom row
// and right column for good (R at the tile borders: 2 n m / tile_size values) and, with the
// whole grid stored, every cell in the anti-diagonal-major store. The backward runs the tile
// diagonals from the last, each tile its cell diagonals from the last with a ring of G in
// shared memory, and passes G across tile borders through three rotating copies (D mod 3) of a
// row buffer (G.up, G.diag of each tile's top row) and a column buffer (G.left, G.diag of its
// left column), as the forward passes R. Without the whole grid (checkpointed), a backward
// tile first recomputes its cells from the stored borders into a scratch tile: one more
// forward, O(n m / tile_size) memory. Every cell is the arithmetic of the one-CTA program, and
// the gradient of a row (a column) adds the same cells in the same order (from the last
// column, row), so the values, E and the gradients of stencil-1 costs (DTW) have its bits.
// Wider stencils write x_{i-1} from the cells of row i: the tiles of a diagonal then run in two
// launches (even, then odd tile rows) so that no two running tiles write one row, and the sums
// at tile borders run in another order (equal within rounding, still deterministic).

/// Where one tiled training job keeps its state in its slot (values): the R borders (rows:
/// the bottom row of every tile row, m values each; cols: the right column of every tile
/// column, n values each), the G borders (3 rotating copies of 2 m + 2 n values), then the
/// whole grid (n m, anti-diagonal-major) or the scratch tiles of the recompute (one per tile of
/// a diagonal).
struct tiled_job_layout {
  index_t n, m;
  bool whole;
  RESILIN_HD constexpr tile_grid tiles() const noexcept { return tile_grid::of(n, m); }
  RESILIN_HD constexpr index_t cols_offset() const noexcept { return tiles().rows * m; }
  RESILIN_HD constexpr index_t g_offset() const noexcept { return cols_offset() + tiles().cols * n; }
  RESILIN_HD constexpr index_t cells_offset() const noexcept { return g_offset() + 6 * (n + m); }
  RESILIN_HD constexpr index_t values() const noexcept {
    tile_grid const tg = tiles();
    index_t const per_diagonal = tg.rows < tg.cols ? tg.rows : tg.cols;
    return cells_offset() + (whole ? n * m : per_diagonal * tile_size * tile_size);
  }
  template <class T> RESILIN_HD T* r_row(T* slot, index_t a) const noexcept { return slot + a * m; }
  template <class T> RESILIN_HD T* r_col(T* slot, index_t b) const noexcept { return slot + cols_offset() + b * n; }
  /// G.up (then G.diag, m further) of the top rows of the tiles of diagonal D.
  template <class T> RESILIN_HD T* g_row(T* slot, index_t d) const noexcept {
    return slot + g_offset() + (d % 3) * 2 * m;
  }
  /// G.left (then G.diag, n further) of the left columns of the tiles of diagonal D.
  template <class T> RESILIN_HD T* g_col(T* slot, index_t d) const noexcept {
    return slot + g_offset() + 6 * m + (d % 3) * 2 * n;
  }
};

/// The R edges of tile tp of a tiled training job: the borders its forward starts from and
/// keeps (store_out: bottom row and right column into the job's border rows and columns).
template <class T>
RESILIN_HD tile_edges<T> training_edges(tiled_job_layout const& L, T* slot, tile_place const& tp,
                                        bool store_out) noexcept {
  tile_edges<T> e;
  e.top = tp.a > 0 ? L.r_row(slot, tp.a - 1) + tp.j0 : nullptr;
  e.left = tp.b > 0 ? L.r_col(slot, tp.b - 1) + tp.i0 : nullptr;
  e.corner = tp.corner<T>([&] { return L.r_row(slot, tp.a - 1)[tp.j0 - 1]; });
  if (store_out) {
    e.bottom = L.r_row(slot, tp.a) + tp.j0;
    e.right = L.r_col(slot, tp.b) + tp.i0;
  }
  return e;
}

/// R around one tile for its backward: the tile's cells (the whole-grid store, or the scratch
/// tile) and its edges (the row above, the column on the left, the corner).
template <class T>
struct tile_r {
  diag_store<T> grid;  // base set: the cells from the whole grid
  T const* local;      // else: the scratch tile, row-major
  tile_edges<T> e;
  index_t i0, j0;
  /// R(i0 + li, j0 + lj) for li, lj >= -1 inside the tile or on its edges.
  RESILIN_HD RESILIN_INLINE T at(index_t li, index_t lj) const noexcept {
    T const inf = math::infinity<T>();
    if (li >= 0 && lj >= 0)
      return grid.base ? grid.diag(i0 + li + j0 + lj)[i0 + li] : local[li * tile_size + lj];
    if (li < 0 && lj < 0) return e.corner;
    if (li < 0) return e.top ? e.top[lj] : inf;
    return e.left ? e.left[li] : inf;
  }
};

/// The G borders of one backward tile: what the tiles below (D + 1), to the right (D + 1) and
/// diagonally below (D + 2) left, and where this tile leaves its own top row and left column.
template <class T>
struct tile_g_edges {
  T const* up_below;     // G.up(i0 + h, j), by global column j (null: below the grid)
  T const* diag_below;   // G.diag(i0 + h, j) for j < j0 + w
  T const* left_right;   // G.left(i, j0 + w), by global row i (null: right of the grid)
  T const* diag_right;   // G.diag(i, j0 + w) for i < i0 + h
  T corner;              // G.diag(i0 + h, j0 + w) (0 outside the grid)
  T* up_top;             // G.up(i0, j) out, by global column j; G.diag follows at + m
  T* left_left;          // G.left(i, j0) out, by global row i; G.diag follows at + n
  index_t n, m;
};

/// The G edges of tile tp of diagonal D of a tiled training job.
template <class T>
RESILIN_HD tile_g_edges<T> training_g_edges(tiled_job_layout const& L, T* slot, tile_place const& tp,
                                            index_t d) noexcept {
  bool const below = tp.i0 + tp.h < L.n, right = tp.j0 + tp.w < L.m;
  tile_g_edges<T> g;
  g.up_below = below ? L.g_row(slot, d + 1) : nullptr;
  g.diag_below = below ? L.g_row(slot, d + 1) + L.m : nullptr;
  g.left_right = right ? L.g_col(slot, d + 1) : nullptr;
  g.diag_right = right ? L.g_col(slot, d + 1) + L.n : nullptr;
  g.corner = below && right ? (L.g_row(slot, d + 2) + L.m)[tp.j0 + tp.w] : T(0);
  g.up_top = L.g_row(slot, d);
  g.left_left = L.g_col(slot, d);
  g.n = L.n;
  g.m = L.m;
  return g;
}

/// One backward step of a tile: A and G of the cells of its local diagonal s from G of local
/// diagonals s+1 and s+2 (the ring) or of the neighbouring tiles (the G edges); with stencil 1
/// it also adds the cell's gradient. Cells outside the band leave G = 0.
template <class T, class Cost, class Smooth>
struct tile_backward_step {
  grid_problem<T, Cost, Smooth> const* p;
  tile_place tp;
  index_t s;
  tile_r<T> r;
  g_ring<T> g;  // local rows, stride tile_size
  tile_g_edges<T> ge;
  T const* dist;  // the tile's distances (distance tiles), or null
  T seed;
  backward_outputs<T> const* o;

  RESILIN_HD void operator()(int thread, int threads) const noexcept {
    index_t const n = p->x.length, m = p->y.length;
    band_geometry const& bg = p->band;
    auto const gs = g.at_step(s);
    diag_span const span = tp.rows(s);
    for (index_t li = span.lo + thread; li <= span.hi; li += threads) {
      index_t const lj = s - li, i = tp.i0 + li, j = tp.j0 + lj;
      bool const in_h = li + 1 < tp.h, in_w = lj + 1 < tp.w;
      step3<T> use{T(0), T(0), T(0)};
      if (bg.contains(i, j)) {  // successors in the tile from the ring, else from the G edges
        T a = T(0);
        if (bg.contains(i + 1, j)) a += in_h ? gs.up1[li + 1] : ge.up_below[j];
        if (bg.contains(i, j + 1)) a += in_w ? gs.left1[li] : ge.left_right[i];
        if (bg.contains(i + 1, j + 1)) {
          if (in_h && in_w) a += gs.diag2[li + 1];
          else if (in_h) a += ge.diag_right[i + 1];
          else a += in_w ? ge.diag_below[j + 1] : ge.corner;
        }
        if (i == n - 1 && j == m - 1) a += seed;
        use = backward_cell(*p, i, j, a, tile_cost(*p, dist, li, lj, i, j), r.at(li - 1, lj - 1),
                            r.at(li - 1, lj), r.at(li, lj - 1), *o);
      }
      gs.up0[li] = use.up;
      gs.left0[li] = use.left;
      gs.diag0[li] = use.diag;
      if (li == 0) {
        ge.up_top[j] = use.up;
        ge.up_top[ge.m + j] = use.diag;
      }
      if (lj == 0) {
        ge.left_left[i] = use.left;
        ge.left_left[ge.n + i] = use.diag;
      }
    }
  }
};

/// The gradient of the in-band cells i = phase (mod grad_stencil) of a tile's local diagonal s
/// (stencil > 1; the phase is the global row's, as in gradient_phase).
template <class T, class Cost, class Smooth>
struct tile_gradient_phase {
  grid_problem<T, Cost, Smooth> const* p;
  tile_place tp;
  index_t s;
  g_ring<T> g;
  int phase;
  backward_outputs<T> const* o;

  RESILIN_HD void operator()(int thread, int threads) const noexcept {
    constexpr index_t st = grad_stencil<Cost>::value;
    diag_span const span = tp.rows(s);
    for (index_t li = span.lo + thread; li <= span.hi; li += threads) {
      index_t const i = tp.i0 + li, j = tp.j0 + s - li;
      if (i % st != phase || !p->band.contains(i, j)) continue;
      step3<T> const use{g.diag(s)[li], g.up(s)[li], g.left(s)[li]};
      p->cost.step_grad(p->x, p->y, i, j, use, o->gx, o->gy);
    }
  }
};

/// Launches per tile diagonal of the tiled backward: 2 (even, then odd tile rows) when the
/// gradient of a wider stencil is asked for, else 1 (parity -1: every tile).
template <class Cost>
constexpr int tiled_backward_launches(bool gradient) noexcept {
  return grad_stencil<Cost>::value > 1 && gradient ? 2 : 1;
}

/// Tile k of diagonal D of training job jk, forward: its cells (into the whole grid when
/// stored), its borders for good, and the job's value from the tile holding the last cell.
/// ring: 3 * tile_size values; distances: null, or distance_tile_values() values.
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD void tiled_train_forward_block(Exec const& ex, train_args<T, Cost, Smooth> const& a,
                                          index_t jk, index_t d, index_t k, T* ring,
                                          T* distances = nullptr) {
  train_job<T, Cost, Smooth> const j = train_job_of(a, jk);
  if (!j.valid) {
    if (d == 0 && k == 0 && ex.leader()) a.results[jk] = quiet_nan<T>();
    return;
  }
  index_t const n = j.p.x.length, m = j.p.y.length;
  tiled_job_layout const L{n, m, a.checkpoint == 0};
  tile_place const tp = tile_place::of(n, m, d, k);
  if (!tp.valid) return;
  tile_cells<T> out;
  if (L.whole) out.grid = diag_store<T>::grid(j.slot + L.cells_offset(), n, m);
  T const last = tile_sweep(ex, j.p, tp, training_edges(L, j.slot, tp, true), ring, out, distances);
  if (tp.i0 + tp.h == n && tp.j0 + tp.w == m && ex.leader()) a.results[jk] = last;
}

/// Tile k of diagonal D of training job jk, backward (after every tile of diagonal D + 1):
/// with parity >= 0 only tiles whose tile row has that parity (wide gradient stencils).
/// ring: 7 * tile_size values; distances: null, or distance_tile_values() values.
template <class T, class Cost, class Smooth, class Exec>
RESILIN_HD void tiled_train_backward_block(Exec const& ex, train_args<T, Cost, Smooth> const& a,
                                           index_t jk, index_t d, index_t k, int parity, T* ring,
                                           T* distances = nullptr) {
  train_job<T, Cost, Smooth> const j = train_job_of(a, jk);
  if (!j.valid || !j.wants_backward()) return;
  index_t const n = j.p.x.length, m = j.p.y.length;
  tiled_job_layout const L{n, m, a.checkpoint == 0};
  tile_place const tp = tile_place::of(n, m, d, k);
  if (!tp.valid || (parity >= 0 && tp.a % 2 != parity)) return;
  tile_r<T> r{{}, nullptr, training_edges(L, j.slot, tp, false), tp.i0, tp.j0};
  if (L.whole) {
    r.grid = diag_store<T>::grid(j.slot + L.cells_offset(), n, m);
    if (distances) tile_distances(ex, j.p, tp, distances);
  } else {  // the tile's cells again, from the stored borders (same bits as the forward)
    T* const scratch = j.slot + L.cells_offset() + k * tile_size * tile_size;
    tile_sweep(ex, j.p, tp, r.e, ring, tile_cells<T>{{}, scratch}, distances);
    r.local = scratch;
    ex.sync();  // every thread has read the sweep's last cell before the ring holds G
  }
  g_ring<T> const g{ring, tile_size};
  tile_g_edges<T> const ge = training_g_edges(L, j.slot, tp, d);
  constexpr int st = grad_stencil<Cost>::value;
  // the two launches per diagonal keep concurrent tiles' rows apart only if a cell's gradient
  // reaches back less than a tile
  static_assert(st <= tile_size, "grad_stencil wider than a tile");
  for (index_t s = tp.last_step(); s >= 0; --s) {
    ex.for_each(tile_backward_step<T, Cost, Smooth>{&j.p, tp, s, r, g, ge, distances, j.seed, &j.o});
    ex.sync();
    if constexpr (st > 1) {
      if (j.o.gx.data) {
        for (int phase = 0; phase < st; ++phase) {
          ex.for_each(tile_gradient_phase<T, Cost, Smooth>{&j.p, tp, s, g, phase, &j.o});
          ex.sync();
        }
      }
    }
  }
}

// --- element-wise epilogues (one thread per element; deterministic) -----------------------------

/// out[b] = S(x,y) - S(x,x)/2 - S(y,y)/2 over a paired batch (jobs as in job_of).
template <class T>
RESILIN_HD void divergence_paired(T const* jobs, index_t batch, T* out, index_t b) noexcept {
  out[b] = divergence_of(jobs[b], jobs[batch + b], jobs[2 * batch + b]);
}

/// out[k] = S(X[a],Y[b]) - S(X[a],X[a])/2 - S(Y[b],Y[b])/2 for k = a * ny + b.
template <class T>
RESILIN_HD void divergence_pairwise(T const* jobs, index_t nx, index_t ny, T* out,
                                    index_t k) noexcept {
  index_t const a = k / ny, b = k % ny;
  out[k] = divergence_of(jobs[k], jobs[nx * ny + a], jobs[nx * ny + nx + b]);
}

/// g[k] += p[k] + q[k] (the self terms of the divergence gradient).
template <class T>
RESILIN_HD void add_two(T* g, T const* p, T const* q, index_t k) noexcept {
  g[k] += p[k] + q[k];
}

/// The pairwise form of training runs as a paired batch of nx * ny jobs, job k = a * ny + b on
/// (X[a], Y[b]): element idx of the expanded copy of a batch of `row` values per series, whose
/// series k is series k / ny (outer: the X side) or k % ny (the Y side) of the source. Also
/// used for the lengths (row = 1).
template <class T>
RESILIN_HD void expand_pairwise(T const* src, index_t row, index_t ny, bool outer, T* dst,
                                index_t idx) noexcept {
  index_t const k = idx / row, r = idx - k * row;
  index_t const s = outer ? k / ny : k % ny;
  dst[idx] = src[s * row + r];
}

/// gx[a] = the sum over b = 0, 1, ..., ny - 1 (in that order: deterministic) of the expanded
/// jobs' gradients g[a * ny + b]; element idx < nx * row.
template <class T>
RESILIN_HD void sum_pairwise_grads(T const* g, index_t row, index_t ny, T* gx, index_t idx) noexcept {
  index_t const a = idx / row, r = idx - a * row;
  T sum = T(0);
  for (index_t b = 0; b < ny; ++b) sum += g[(a * ny + b) * row + r];
  gx[idx] = sum;
}

// --- independent channels (measure::independent_channels): one univariate problem per channel --

/// Element idx of the channel-major copy of a batch (series x length x channels, interleaved):
/// dst[(c * series + s) * length + t] = src[(s * length + t) * channels + c], so channel c of
/// every series is a contiguous one-channel batch with the source's lengths.
template <class T>
RESILIN_HD void split_channels(T const* src, index_t series, index_t length, index_t channels,
                               T* dst, index_t idx) noexcept {
  index_t const t = idx % length, rest = idx / length;
  index_t const s = rest % series, c = rest / series;
  dst[idx] = src[(s * length + t) * channels + c];
}

/// The inverse of split_channels: element idx of the interleaved batch from its channel-major copy.
template <class T>
RESILIN_HD void merge_channels(T const* src, index_t series, index_t length, index_t channels,
                               T* dst, index_t idx) noexcept {
  index_t const c = idx % channels, rest = idx / channels;
  index_t const t = rest % length, s = rest / length;
  dst[idx] = src[(c * series + s) * length + t];
}

/// out[k] = the sum over c = 0, 1, ..., channels - 1 (in that order, as the host adds them) of
/// per_channel[c * count + k].
template <class T>
RESILIN_HD void sum_channels(T const* per_channel, index_t count, index_t channels, T* out,
                             index_t k) noexcept {
  T sum = T(0);
  for (index_t c = 0; c < channels; ++c) sum += per_channel[c * count + k];
  out[k] = sum;
}

// --- workspace plans (host side) ---------------------------------------------------------------

inline constexpr std::size_t workspace_alignment = 256;
inline constexpr std::size_t shared_ring_limit = 48 * 1024;  // default dynamic shared memory
/// training_store::automatic checkpoints when the whole grids of a call exceed this (bytes).
inline constexpr std::size_t checkpoint_threshold = std::size_t(4) << 30;

RESILIN_HD constexpr std::size_t align_up(std::size_t v) noexcept {
  return (v + workspace_alignment - 1) / workspace_alignment * workspace_alignment;
}

/// Threads per block for diagonals of at most `longest_diagonal` cells.
constexpr int block_threads(index_t longest_diagonal) noexcept {
  index_t t = (longest_diagonal + 31) / 32 * 32;
  if (t < 32) t = 32;
  if (t > 256) t = 256;
  return static_cast<int>(t);
}

/// Jobs per CTA in warp_per_pair (256 threads).
inline constexpr int warp_jobs_per_block = 8;

/// Threads per job and jobs per CTA for a schedule; longest_diagonal bounds a job's rows.
struct job_mapping {
  int threads = 32;         // per job
  int jobs_per_block = 1;
  bool warps = false;       // one warp per job (__syncwarp), else one CTA per job
  RESILIN_HD constexpr index_t blocks(index_t jobs) const noexcept {
    return (jobs + jobs_per_block - 1) / jobs_per_block;
  }
};

/// warps_per_block: jobs per CTA when the jobs run one warp each (fewer when there are fewer).
constexpr job_mapping map_jobs(device_schedule s, index_t longest_diagonal, index_t jobs,
                               int warps_per_block = warp_jobs_per_block) noexcept {
  int const block = block_threads(longest_diagonal);
  bool const warps = s == device_schedule::warp_per_pair ||
                     (s == device_schedule::automatic && block == 32 && jobs > 1);
  if (!warps) return {block, 1, false};
  int const per_block = jobs < warps_per_block ? static_cast<int>(jobs < 1 ? 1 : jobs) : warps_per_block;
  return {32, per_block, true};
}

/// The most blocks in a launch's x dimension (2^31 - 1); a call of more (a pairwise call of
/// billions of pairs) launches consecutive chunks.
inline constexpr index_t max_grid_blocks = 2147483647;

/// Calls launch(first, count) for consecutive chunks [first, first + count) of [0, blocks) of
/// at most `limit` blocks each, in order, until one returns non-zero (an error: returned).
template <class F>
auto for_each_block_chunk(index_t blocks, index_t limit, F&& launch) {
  using result = decltype(launch(index_t{}, index_t{}));
  for (index_t first = 0; first < blocks; first += limit) {
    index_t const count = blocks - first < limit ? blocks - first : limit;
    if (result r = launch(first, count); r != result{}) return r;
  }
  return result{};
}

/// Whether device_schedule::automatic takes the tiled wavefront: for a few long problems (at
/// most a quarter as many as SMs, `rows` >= 4 tiles: the rows of a job of the path), which one
/// CTA per problem would leave most SMs idle for; and whenever the tiles compute their
/// distances in shared memory (distance_tiles: a DTW cost of >= 16 channels, the opt-in shared
/// memory holding the tile) and the shorter series fills at least half a tile, since per-cell
/// distances of many channels cost a load per channel and cell.
constexpr bool tiles_automatically(index_t jobs, index_t rows, index_t shortest, int multiprocessors,
                                   bool distance_tiles) noexcept {
  if (jobs * 4 <= multiprocessors && rows >= 4 * tile_size) return true;
  return distance_tiles && shortest >= tile_size / 2;
}

/// device_schedule::automatic takes the strip warp for value jobs of more than shuffle_rows and
/// at most strip_rows rows when there are at least this many jobs per SM: then every SM keeps
/// several warps (each one job) busy, where a CTA per job pays a barrier per anti-diagonal.
inline constexpr index_t strip_jobs_per_multiprocessor = 4;

/// Jobs (warps) per CTA of the strip warp. Its programs take many registers (sm_90, ptxas:
/// 64 to 94 per lane; 79 for univariate hard DTW in float, whose strip lives in registers),
/// so that CTAs of 8 warps would leave whole CTAs' worth of an SM's registers unused.
inline constexpr int strip_jobs_per_block = 4;

/// Whether the value path takes the strip warp (rows: the most rows of a job).
constexpr bool strips(device_schedule s, index_t jobs, index_t rows, int multiprocessors) noexcept {
  if (rows <= shuffle_rows || rows > strip_rows) return false;
  if (s == device_schedule::warp_per_pair) return true;
  return s == device_schedule::automatic && multiprocessors > 0 &&
         jobs >= strip_jobs_per_multiprocessor * multiprocessors;
}

/// The value path: jobs, ring placement and workspace bytes.
struct value_plan {
  index_t jobs = 0;
  index_t stride = 0;           // ring stride (values)
  int threads = 32;             // per job
  job_mapping mapping{};        // threads per job, jobs per CTA
  std::size_t ring_bytes = 0;   // per job: its ring in shared memory or the workspace (strip: its stage)
  bool shared_ring = true;      // rings in dynamic shared memory, else in the workspace
  bool tiled = false;           // the tiled wavefront: one launch per tile diagonal
  bool shuffle = false;         // one warp per job, one row per lane, shuffles (no ring)
  bool strip = false;           // one warp per job, a strip of rows per lane (no ring)
  index_t stage_values = 0;     // strip: shared memory per warp for the rows series (0: none)
  index_t tile_diagonals = 0;   // tiled: launches (tile diagonals of the largest grid)
  index_t tiles_per_diagonal = 0;  // tiled: CTAs per job and launch (at most)
  std::size_t borders_offset = 0, borders_bytes = 0;  // tiled: 6 min(n, m) values per job (whole tiles)
  std::size_t results_offset = 0, results_bytes = 0;  // job values (divergence only)
  std::size_t rings_offset = 0, rings_bytes = 0;      // global rings (when not shared)
  std::size_t bytes = 0;        // total workspace

  /// Dynamic shared memory per CTA.
  std::size_t shared_bytes() const noexcept {
    return shared_ring ? ring_bytes * static_cast<std::size_t>(mapping.jobs_per_block) : 0;
  }

  static value_plan make(job_layout layout, index_t nx, index_t ny, index_t nmax, index_t mmax,
                         bool divergence, std::size_t value_size,
                         device_schedule schedule = device_schedule::automatic,
                         int multiprocessors = 0, bool distance_tiles = false,
                         index_t channels = 1) {
    value_plan q;
    q.jobs = job_count(layout, nx, ny, divergence);
    // the rows of a job are its shorter series; the self terms are (n, n) and (m, m)
    index_t shortest = nmax < mmax ? nmax : mmax;
    if (divergence) shortest = nmax > mmax ? nmax : mmax;
    q.stride = shortest < 1 ? 1 : shortest;
    q.mapping = map_jobs(schedule, q.stride, q.jobs);
    q.threads = q.mapping.threads;
    q.ring_bytes = static_cast<std::size_t>(3 * q.stride) * value_size;
    q.shared_ring = q.ring_bytes * static_cast<std::size_t>(q.mapping.jobs_per_block) <= shared_ring_limit;
    q.tiled = q.jobs > 0 && q.jobs <= max_tiled_jobs &&
              (schedule == device_schedule::tiled ||
               (schedule == device_schedule::automatic && multiprocessors > 0 &&
                tiles_automatically(q.jobs, q.stride, nmax < mmax ? nmax : mmax, multiprocessors,
                                    distance_tiles)));
    if (q.tiled) {
      q.mapping = {static_cast<int>(tile_size), 1, false};
      q.threads = static_cast<int>(tile_size);
      q.ring_bytes = static_cast<std::size_t>(3 * tile_size) * value_size;
      q.shared_ring = true;
      tile_launches const tl = tile_launches::of(nmax, mmax, divergence);
      q.tile_diagonals = tl.diagonals;
      q.tiles_per_diagonal = tl.per_diagonal;
    }
    q.shuffle = !q.tiled && q.mapping.warps && q.stride <= shuffle_rows;
    if (q.shuffle) {  // registers only
      q.ring_bytes = 0;
      q.shared_ring = true;
    }
    q.strip = !q.tiled && strips(schedule, q.jobs, q.stride, multiprocessors);
    if (q.strip) {  // registers, and the rows series in shared memory when the CTA's fit
      q.mapping = map_jobs(device_schedule::warp_per_pair, q.stride, q.jobs, strip_jobs_per_block);
      q.threads = q.mapping.threads;
      std::size_t const per_job = static_cast<std::size_t>(q.stride * channels) * value_size;
      bool const staged = per_job * static_cast<std::size_t>(q.mapping.jobs_per_block) <= shared_ring_limit;
      q.stage_values = staged ? q.stride * channels : 0;
      q.ring_bytes = staged ? per_job : 0;  // shared_bytes(): the stages
      q.shared_ring = true;
    }
    std::size_t off = 0;
    if (q.tiled) {
      q.borders_offset = off;
      q.borders_bytes = align_up(static_cast<std::size_t>(q.jobs) *
                                 static_cast<std::size_t>(tile_borders<char>::values(q.tiles_per_diagonal)) *
                                 value_size);
      off += q.borders_bytes;
    }
    // pairwise results are written in place into out only when there is no divergence
    if (divergence) {
      q.results_offset = off;
      q.results_bytes = align_up(static_cast<std::size_t>(q.jobs) * value_size);
      off += q.results_bytes;
    }
    if (!q.shared_ring) {
      q.rings_offset = off;
      q.rings_bytes = align_up(static_cast<std::size_t>(q.jobs) * q.ring_bytes);
      off += q.rings_bytes;
    }
    q.bytes = off > 0 ? off : 1;  // never 0: a null workspace means "size query" (CUB)
    return q;
  }
};

/// The training path (paired batches): R store, job values, rings, divergence gradients.
struct train_plan {
  index_t jobs = 0;
  index_t stride = 0;
  int threads = 32;                     // per job
  job_mapping mapping{};                // threads per job, jobs per CTA
  std::size_t ring_bytes = 0;           // per job
  bool shared_ring = true;
  index_t slot_offset[3] = {0, 0, 0};   // in values, from the store
  index_t slot_size[3] = {0, 0, 0};
  index_t checkpoint = 0;               // the checkpointed mode's interval k (0: whole grids;
                                        // tiled: 1, each tile recomputed from its borders)
  bool tiled = false;                   // the tiled wavefront (launches per tile diagonal)
  bool shuffle = false;                 // one warp per job, one row per lane, shuffles (jobs of
                                        // at most 32 rows, R stored whole; no ring)
  index_t tile_diagonals = 0;           // tiled: launches per sweep (the largest grid's)
  index_t tiles_per_diagonal = 0;       // tiled: CTAs per job and launch (at most)
  std::size_t store_offset = 0, store_bytes = 0;
  std::size_t results_offset = 0, results_bytes = 0;
  std::size_t rings_offset = 0, rings_bytes = 0;
  std::size_t selfgrad_offset = 0, selfgrad_bytes = 0;  // gx1, gx2, gy1, gy2 (divergence)
  std::size_t bytes = 0;

  /// Dynamic shared memory per CTA.
  std::size_t shared_bytes() const noexcept {
    return shared_ring ? ring_bytes * static_cast<std::size_t>(mapping.jobs_per_block) : 0;
  }

  static train_plan make(index_t batch, index_t nmax, index_t mmax, index_t channels,
                         bool divergence, bool results_in_workspace, std::size_t value_size,
                         device_schedule schedule = device_schedule::automatic,
                         training_store storage = training_store::automatic,
                         int multiprocessors = 0, bool distance_tiles = false) {
    train_plan q;
    q.jobs = job_count(job_layout::paired, batch, batch, divergence);
    q.stride = nmax > mmax ? nmax : mmax;
    if (!divergence) q.stride = nmax;
    if (q.stride < 1) q.stride = 1;
    index_t const shortest = nmax < mmax ? nmax : mmax;
    q.mapping = map_jobs(schedule, divergence ? q.stride : shortest, q.jobs);
    q.threads = q.mapping.threads;
    q.ring_bytes = static_cast<std::size_t>(7 * q.stride) * value_size;
    q.shared_ring = q.ring_bytes * static_cast<std::size_t>(q.mapping.jobs_per_block) <= shared_ring_limit;
    q.slot_size[0] = nmax * mmax;
    q.slot_size[1] = divergence ? nmax * nmax : 0;
    q.slot_size[2] = divergence ? mmax * mmax : 0;
    std::size_t const whole = static_cast<std::size_t>(batch) *
        static_cast<std::size_t>(q.slot_size[0] + q.slot_size[1] + q.slot_size[2]) * value_size;
    bool const checkpointed = storage == training_store::checkpointed ||
                              (storage == training_store::automatic && whole > checkpoint_threshold);
    index_t const longest = nmax > mmax ? nmax : mmax;
    q.tiled = q.jobs > 0 && q.jobs <= max_tiled_jobs &&
              (schedule == device_schedule::tiled ||
               (schedule == device_schedule::automatic && multiprocessors > 0 &&
                tiles_automatically(q.jobs, shortest, shortest, multiprocessors, distance_tiles)));
    if (q.tiled) {
      q.mapping = {static_cast<int>(tile_size), 1, false};
      q.threads = static_cast<int>(tile_size);
      q.ring_bytes = static_cast<std::size_t>(7 * tile_size) * value_size;
      q.shared_ring = true;
      q.checkpoint = checkpointed ? 1 : 0;
      q.slot_size[0] = tiled_job_layout{nmax, mmax, !checkpointed}.values();
      q.slot_size[1] = divergence ? tiled_job_layout{nmax, nmax, !checkpointed}.values() : 0;
      q.slot_size[2] = divergence ? tiled_job_layout{mmax, mmax, !checkpointed}.values() : 0;
      tile_launches const tl = tile_launches::of(nmax, mmax, divergence);
      q.tile_diagonals = tl.diagonals;
      q.tiles_per_diagonal = tl.per_diagonal;
    } else if (checkpointed) {
      index_t const k = checkpoint_interval(2 * longest - 1);
      index_t const kept[3] = {checkpoint_slots(nmax + mmax - 1, k) * q.stride,
                               divergence ? checkpoint_slots(2 * nmax - 1, k) * q.stride : 0,
                               divergence ? checkpoint_slots(2 * mmax - 1, k) * q.stride : 0};
      // a slot holds a diagonal at the rows' stride: with the rows much the longer series (X of
      // 20000 against 200) the checkpoints outweigh the whole grids (x2.1), which automatic
      // storage then keeps instead
      std::size_t const checkpoint_bytes =
          static_cast<std::size_t>(batch) * static_cast<std::size_t>(kept[0] + kept[1] + kept[2]) * value_size;
      if (storage != training_store::automatic || checkpoint_bytes < whole) {
        q.checkpoint = k;
        for (int p = 0; p < 3; ++p) q.slot_size[p] = kept[p];
      }
    }
    q.shuffle = !q.tiled && q.mapping.warps && q.checkpoint == 0 && q.stride <= shuffle_rows;
    if (q.shuffle) {  // G in registers: no ring
      q.ring_bytes = 0;
      q.shared_ring = true;
    }
    q.slot_offset[0] = 0;
    q.slot_offset[1] = batch * q.slot_size[0];
    q.slot_offset[2] = q.slot_offset[1] + batch * q.slot_size[1];
    std::size_t off = 0;
    q.store_offset = off;
    q.store_bytes = align_up(static_cast<std::size_t>(q.slot_offset[2] + batch * q.slot_size[2]) *
                             value_size);
    off += q.store_bytes;
    if (divergence || results_in_workspace) {
      q.results_offset = off;
      q.results_bytes = align_up(static_cast<std::size_t>(q.jobs) * value_size);
      off += q.results_bytes;
    }
    if (!q.shared_ring) {
      q.rings_offset = off;
      q.rings_bytes = align_up(static_cast<std::size_t>(q.jobs) * q.ring_bytes);
      off += q.rings_bytes;
    }
    if (divergence) {
      q.selfgrad_offset = off;
      q.selfgrad_bytes =
          align_up(static_cast<std::size_t>(2 * batch * (nmax + mmax) * channels) * value_size);
      off += q.selfgrad_bytes;
    }
    q.bytes = off > 0 ? off : 1;  // never 0: a null workspace means "size query" (CUB)
    return q;
  }
};

}  // namespace device_detail
}  // namespace resilin
