#pragma once
// A faster forward for the soft-min with uniform step costs (DTW costs): the recursion in the
// exponential domain. With P = exp(-R / gamma),
//     P(i, j) = exp(-delta(i, j) / gamma) * (P(i-1, j-1) + P(i-1, j) + P(i, j-1)),
// one exponential per cell and no logarithm. Each P is held as m * 2^k (m in [1, 2), k an
// integer stored in T), so no magnitude overflows or underflows: the three predecessors are
// aligned by exact powers of two, and the result is R = -gamma ln2 (k + log2 m) at the end.
// Rounding: each cell adds a relative error of a few ulp to P, i.e. an absolute error of a few
// ulp of (gamma + delta) to R, against a few ulp of R per cell in the log domain.
// It is used only where every k stays an exact integer in T (checked per pair from bounds on
// delta and on R: exp_domain_exact); everywhere else the log-domain traversal runs. For gradients the forward also keeps
// the band's part of the row above every strip for the backward of exp_domain_grad.hpp.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/row_slices.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/math.hpp>
#include <resilin/cost/dtw.hpp>
#include <resilin/smoothing/soft_min.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

template <class T>
struct exp_domain_traits;
template <>
struct exp_domain_traits<double> {
  static constexpr double magic = 6755399441055744.0;  // 1.5 * 2^52: rounds to an integer
  static constexpr int mant = 52, bias = 1023, min_exp = -1022;
  static constexpr double max_k = 1125899906842624.0;  // 2^50: every k stays exact
};
template <>
struct exp_domain_traits<float> {
  static constexpr float magic = 12582912.0f;  // 1.5 * 2^23
  static constexpr int mant = 23, bias = 127, min_exp = -126;
  static constexpr float max_k = 4194304.0f;   // 2^22
};

/// An upper bound of delta over all cells of one pair (0 if the distance has no bound here).
template <class T, class Distance>
T delta_bound(series_view<T const> x, series_view<T const> y) {
  T ax = T(0), ay = T(0);
  for (index_t k = 0; k < x.size(); ++k) ax = math::max(ax, math::abs(x.data[k]));
  for (index_t k = 0; k < y.size(); ++k) ay = math::max(ay, math::abs(y.data[k]));
  T const a = ax + ay, d = static_cast<T>(x.channels);
  if constexpr (std::same_as<Distance, l1_distance>) return a * d;
  else if constexpr (std::same_as<Distance, half_squared_euclidean>) return T(0.5) * a * a * d;
  else return a * a * d;
}

/// An upper bound of R(i, j) over the band's cells, with x's samples as rows: R is at most the
/// cost of any path into the cell (each soft-min is at most its candidates), here the path down
/// the band's left edge to row i, then along row i to j (the rows' spans never move back and
/// consecutive rows touch, so it stays in the band). The edge's costs are summed exactly; a row's
/// from delta(a, b) <= sum_c t(a_c) + t(b_c) with t(v) = 2 v^2 (squared Euclidean; v^2 for half
/// of it, |v| for L1), y's terms by prefix sums: O((n + m) channels) in all, in double.
template <class T, class Distance>
double edge_path_bound(series_view<T const> x, series_view<T const> y, band_geometry const& band) {
  auto const t = [](double v) {
    if constexpr (std::same_as<Distance, l1_distance>) return v < 0 ? -v : v;
    else if constexpr (std::same_as<Distance, half_squared_euclidean>) return v * v;
    else return 2 * v * v;
  };
  index_t const n = x.length, m = y.length, d = x.channels;
  std::vector<double> prefix(static_cast<std::size_t>(m + 1), 0.0);  // of y's terms
  for (index_t j = 0; j < m; ++j) {
    double s = 0;
    for (index_t c = 0; c < d; ++c) s += t(static_cast<double>(y(j, c)));
    prefix[static_cast<std::size_t>(j + 1)] = prefix[static_cast<std::size_t>(j)] + s;
  }
  double edge = 0, widest = 0;
  for (index_t i = 0; i < n; ++i) {
    index_range const span = band.row(i);
    index_t const last = i + 1 < n ? std::min(band.row(i + 1).lo, span.hi) : span.lo;
    for (index_t j = span.lo; j <= last; ++j) edge += static_cast<double>(Distance::value(x.row(i), y.row(j), d));
    double xs = 0;
    for (index_t c = 0; c < d; ++c) xs += t(static_cast<double>(x(i, c)));
    double const row = static_cast<double>(span.hi - span.lo + 1) * xs +
                       (prefix[static_cast<std::size_t>(span.hi + 1)] - prefix[static_cast<std::size_t>(span.lo)]);
    widest = std::max(widest, row);
  }
  return edge + widest;
}

/// Whether the exponential-domain traversal keeps every k exact for this pair. A cell's
/// k = -R / (gamma ln 2) - log2 m lies between -(R's bound) / (gamma ln 2) and (n + m) log2 3
/// (each soft-min is at most gamma ln 3 under its least candidate), and the cell's sum km + kx
/// reaches delta / (gamma ln 2) beyond its predecessors'; all of it, with margins for rounding,
/// must stay below max_k. R's bound is the least of (n + m) times delta's and the edge paths' of
/// both orientations (so that the decision is symmetric in x and y). On z-normalised random
/// walks the edge paths' is 8-9 (n + m) without a band and 1-3.4 (n + m) at radius 10, where
/// delta's alone gave 22-32 (n + m): float's exponential domain now reaches n = m = 13500-30000
/// at gamma = 0.1 (150000-219000 at gamma = 1), where it stopped at 5500-6000 (54000-64000).
template <class T, class Distance>
bool exp_domain_exact(series_view<T const> x, series_view<T const> y, T gamma, band_geometry const& band) {
  double const delta = static_cast<double>(delta_bound<T, Distance>(x, y));
  double const steps = static_cast<double>(x.length + y.length);
  auto const admits = [&](double r) {  // with r, R's bound
    double const reach = (r * 1.0001 + delta) * 1.4426950408889634 / static_cast<double>(gamma) + steps * 2 + 16;
    return std::isfinite(reach) && reach < static_cast<double>(exp_domain_traits<T>::max_k);
  };
  if (admits(steps * delta)) return true;  // the cheap bound first (most pairs in double)
  band_geometry const transposed{band.m, band.n, band.half_width, band.slope};
  return admits(std::min(edge_path_bound<T, Distance>(x, y, band), edge_path_bound<T, Distance>(y, x, transposed)));
}

/// Whether a pair takes the exponential domain: exact k (exp_domain_exact), and not where the
/// band holds one path (a single row or column, a radius-0 band with n = m), whose value the
/// log domain gives as the exact sum of its costs (a 1 x 1 float pair at gamma = 1e6 came out
/// 7 % off, a 50 x 50 radius-0 one 6e-5). Its R = -gamma ln 2 (k + log2 m) carries a few ulp of
/// gamma per cell; a value that this leaves inaccurate runs again in the log domain
/// (exp_domain_accurate). Single pairs, training and the lock-step groups all ask both, so
/// batches keep the single-pair bits.
template <class T, class Distance>
bool exp_domain_applies(series_view<T const> x, series_view<T const> y, T gamma, band_geometry const& band) {
  return !band.single_path() && exp_domain_exact<T, Distance>(x, y, gamma, band);
}

/// Whether an exponential-domain value S of an n x m pair keeps its accuracy. Its error is a
/// few ulp of gamma per cell, about 0.02-0.15 eps gamma (n + m) in all, whatever S; the log
/// domain's scales with |R|. Where |S| is below accurate_factor eps gamma (n + m) (one cheap
/// path among far dearer ones, e.g. a series against a slightly perturbed copy: a float S of
/// 1e-5 came out 0, 1e-3 came out 1.4 % off) the caller runs the pair again in the log domain;
/// above, the relative error stays below about 4e-5 in float (factor 4096) and 1e-12 in double
/// (2^37: with 4096, a double S of 9.55e-13 at gamma = 0.05 came out 1.1e-5 off).
template <class T>
bool exp_domain_accurate(T value, T gamma, index_t n, index_t m) noexcept {
  constexpr T accurate_factor = std::same_as<T, double> ? T(137438953472.0) : T(4096);
  return !(math::abs(value) < accurate_factor * std::numeric_limits<T>::epsilon() * gamma * static_cast<T>(n + m));
}

template <class T>
struct exp_value {
  simd::pack<T> m, k;  // P = m * 2^k; unreachable: m = 1, k = unreachable_k
};

template <class T>
inline constexpr T unreachable_k = -std::numeric_limits<T>::max() / 4;

/// 2^d for integer-valued d <= 0 (below the smallest normal exponent: 2^min_exp, negligible
/// against the maximum term, which is >= 1).
template <class T>
RESILIN_INLINE simd::pack<T> pow2_int(simd::pack<T> d) noexcept {
  using P = simd::pack<T>;
  using tr = exp_domain_traits<T>;
  P const t = simd::max(d, P(T(tr::min_exp))) + tr::magic;
  return P::from_bits((t.bits() + tr::bias) << tr::mant);
}

/// The cell in the exponential domain: x = -delta log2(e) / gamma <= 0.
template <class T>
RESILIN_INLINE exp_value<T> exp_cell(exp_value<T> const& d, exp_value<T> const& u,
                                     exp_value<T> const& l, simd::pack<T> x) noexcept {
  using P = simd::pack<T>;
  using tr = exp_domain_traits<T>;
  P const km = simd::max(d.k, simd::max(u.k, l.k));
  // diag + (up + left): exactly symmetric under swapping x and y (up and left trade places)
  P const s = d.m * pow2_int(d.k - km) + (u.m * pow2_int(u.k - km) + l.m * pow2_int(l.k - km));
  P const kx = (x + tr::magic) - tr::magic;  // round(x): exact while |x| < 2^(mant-1)
  P const f = x - kx;                        // [-1/2, 1/2]
  // 2^f = 1 + f q(f), q fitted by Remez for the least relative error on |f| <= 1/2: 4.3e-17 in
  // double at degree 11 and 9.2e-10 in float at degree 7, the coefficients exactly as written
  // (the Taylor polynomials of degree 12 and 7 before erred up to 2.4e-16 and 8.5e-9)
  P p;
  if constexpr (std::same_as<T, double>) {
    constexpr double c[12] = {1.0,
                              0.6931471805599457,
                              0.24022650695910097,
                              0.05550410866479039,
                              0.009618129107607003,
                              0.0013333558153440133,
                              0.0001540353044157236,
                              1.5252727385038238e-05,
                              1.3215442675182759e-06,
                              1.0180647722118852e-07,
                              7.072570442467681e-09,
                              4.078062699466225e-10};
    p = simd::polynomial(f, c);
  } else {
    constexpr float c[8] = {1.0f,
                            0.6931471824645996f,
                            0.24022650718688965f,
                            0.055504005402326584f,
                            0.009618056938052177f,
                            0.0013341951416805387f,
                            0.00015461367729585618f,
                            1.3359815966396127e-05f};
    p = simd::polynomial(f, c);
  }
  P const mm = s * p;  // (0, 12): renormalise to [1, 2) and move the exponent into k
  using I = typename P::int_type;
  typename P::mask const b = mm.bits();
  typename P::mask const e = simd::shift_right_logical(b, tr::mant) - I(tr::bias);  // mm > 0
  P const m = P::from_bits((b & ((I(1) << tr::mant) - 1)) | (I(tr::bias) << tr::mant));
  P const ef = P::from_bits(P(tr::magic).bits() + e) - tr::magic;  // e as floating point
  return {m, km + kx + ef};
}

/// One strip of the exponential-domain forward on the rolling row (row_m, row_k): reads
/// P(i0 - 1, j) = row_m[j + 1] * 2^row_k[j + 1] and leaves P(i0 + H - 1, j) there for the next
/// strip (the writes trail the reads), and with `out` stores every step's K packs of m then K
/// packs of k at out + (t - t0) * 2K. Returns the packs of the strip's last step in `last`.
template <class T, class Lanes>
void exp_forward_strip(Lanes& lanes, strip_geometry<T> const& geo, T scale, T* row_m, T* row_k,
                       simd::pack<T>* out, exp_value<T>* last) {
  using V = simd::pack<T>;
  constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  V const ones(T(1)), unreachable(unreachable_k<T>);
  exp_value<T> cur[K], prev[K];
  for (int q = 0; q < K; ++q) cur[q] = prev[q] = {ones, unreachable};
  geo.for_each_step([&](index_t t, auto masked) __attribute__((always_inline)) {
    exp_value<T> next[K];
    // unrolled, the rotation below is register renaming instead of copies through the stack
RESILIN_UNROLL(16)
    for (int q = 0; q < K; ++q) {
      exp_value<T> a1, a2;
      if (q == 0) {
        a1 = {V(row_m[t + 1]), V(row_k[t + 1])};
        a2 = {V(row_m[t]), V(row_k[t])};
      } else {
        a1 = cur[q - 1];
        a2 = prev[q - 1];
      }
      exp_value<T> const up{simd::shift_in_front(cur[q].m, a1.m), simd::shift_in_front(cur[q].k, a1.k)};
      exp_value<T> const diag{simd::shift_in_front(prev[q].m, a2.m),
                              simd::shift_in_front(prev[q].k, a2.k)};
      if constexpr (decltype(masked)::value) {
        if (geo.idle(q, t)) {  // every lane out of the band: what the selects below would give
          next[q] = {ones, unreachable};
          continue;
        }
        auto const in = geo.inside(q, geo.step(t));
        exp_value<T> const c = exp_cell(diag, up, cur[q], lanes.costs(q, t, in).diag * scale);
        next[q] = {simd::select(in, c.m, ones), simd::select(in, c.k, unreachable)};
      } else {
        next[q] = exp_cell(diag, up, cur[q], lanes.costs(q, t, typename V::mask{}).diag * scale);
      }
    }
RESILIN_UNROLL(16)
    for (int q = 0; q < K; ++q) {
      prev[q] = cur[q];
      cur[q] = next[q];
    }
    if (out) {
      V* const o = out + (t - geo.t0) * 2 * K;
      for (int q = 0; q < K; ++q) {
        o[q] = next[q].m;
        o[K + q] = next[q].k;
      }
    }
    index_t const jl = t - (H - 1);  // the strip's last row feeds the next strip
    if (jl >= -1) {
      row_m[jl + 1] = next[K - 1].m[W - 1];
      row_k[jl + 1] = next[K - 1].k[W - 1];
    }
  });
  for (int q = 0; q < K; ++q) last[q] = cur[q];
}

/// R = -gamma ln2 (k + log2 m) of a final P = m 2^k (+inf when unreachable).
template <class T>
T exp_domain_result(T gamma, T mo, T ko) noexcept {
  if (ko <= unreachable_k<T> / 2) return math::infinity<T>();
  // in double: k is large (|R| / (gamma ln2)), so k + log2 m in float would lose R's last bits
  return static_cast<T>(-static_cast<double>(gamma) * 0.6931471805599453 *
                        (static_cast<double>(ko) + std::log2(static_cast<double>(mo))));
}

/// -log2(e) / gamma: x = scale * delta is the exponent of the cell factor 2^x.
template <class T, class Smooth>
T exp_domain_scale(Smooth const& smooth) noexcept {
  return -T(1.4426950408889634) * math::inverse_temperature(smooth.gamma);
}

/// Packs of one strip in a stored table: 2K per step, from two unreachable steps before t0
/// (so that the backward reads the steps t - 1 and t - 2 of every step t without a test).
template <class T>
index_t exp_strip_packs(strip_geometry<T> const& geo) noexcept {
  return (geo.t1 - geo.t0 + 3) * 2 * strip_vectors<T>;
}

/// Fills the two leading unreachable steps of a stored strip; returns where step t0 goes.
template <class T>
simd::pack<T>* exp_pad_strip(simd::pack<T>* strip) noexcept {
  constexpr int K = strip_vectors<T>;
  for (int u = 0; u < 2; ++u)
    for (int q = 0; q < K; ++q) {
      strip[u * 2 * K + q] = simd::pack<T>(T(1));
      strip[u * 2 * K + K + q] = simd::pack<T>(unreachable_k<T>);
    }
  return strip + 4 * K;
}

/// Packs of the stored table of every strip of an n-row problem.
template <class T>
index_t exp_table_packs(band_geometry const& band, index_t n) {
  constexpr int H = strip_vectors<T> * simd::pack<T>::width;
  index_t total = 0;
  for (index_t i0 = 0; i0 < n; i0 += H) total += exp_strip_packs(strip_geometry<T>(band, n, i0));
  return total;
}

/// The rows of P = m 2^k that an exponential-domain forward keeps for its backward: the forward
/// runs on one rolling row of m + H + 1 entries (column j at j + 1; the backward's scratch row
/// after it) and keeps the slot above every `every`-th strip (strip_row_slices: the part its
/// cells read). every = 1: every strip's; every = k > 1 (two levels): the backward recomputes the
/// slots of one segment of k strips at a time into segment_*. every = 0 (values): none.
template <class T>
struct exp_rows {
  std::vector<T> m, k;                  // the kept slots, one after another
  std::vector<T> roll_m, roll_k;        // the rolling row
  std::vector<T> segment_m, segment_k;  // two levels: one segment's slots
  strip_row_slices<T> slices;
  index_t every = 0;
  index_t segment_first = -1;  // the strip of segment_*'s first slot (-1: none)

  /// For an n-row problem of `columns` columns; the top border is P(-1, j): the origin alone.
  void reset(band_geometry const& band, index_t n, index_t columns, index_t keep_every) {
    constexpr int H = strip_vectors<T> * simd::pack<T>::width;
    every = keep_every;
    segment_first = -1;
    auto const row = static_cast<std::size_t>(columns + H + 1);
    roll_m.assign(row, T(1));
    roll_k.assign(row, unreachable_k<T>);
    roll_k[0] = T(0);  // the virtual origin: R(-1, -1) = 0, P = 1 * 2^0
    if (every == 0) return;
    slices.plan(band, n, every);
    m.resize(static_cast<std::size_t>(slices.kept_total()));
    k.resize(static_cast<std::size_t>(slices.kept_total()));
  }
  /// The forward keeps slot s of its rolling row before strip s (every k-th strip).
  void keep(index_t s) {
    if (every == 0 || s % every != 0) return;
    auto const to = static_cast<std::size_t>(slices.kept_offset(s));
    slices.keep(s, roll_m.data(), m.data() + to, T(1));
    slices.keep(s, roll_k.data(), k.data() + to, unreachable_k<T>);
  }
  /// The backward's slot above strip s: kept (every = 1) or in the segment (two levels).
  std::array<row_slot<T>, 2> slot(index_t s) const noexcept {
    index_t const first = slices.first[static_cast<std::size_t>(s)], width = slices.width(s);
    auto const a = static_cast<std::size_t>(slices.offset_of(s, segment_first));
    T const* const sm = every == 1 ? m.data() : segment_m.data();
    T const* const sk = every == 1 ? k.data() : segment_k.data();
    return {row_slot<T>{sm + a, first, width}, row_slot<T>{sk + a, first, width}};
  }
};

/// Forward of a soft_min problem with uniform step costs: returns R(n-1, m-1). Value only
/// (keep_every 0) it needs O(m) memory in rows. With keep_every = 1 the slot of the row above
/// every strip stays in rows (exp_rows), from which backward_exp_domain recomputes the strip;
/// with keep_every = k > 1 every k-th of them (two levels).
/// With `table` (exp_table_packs packs) it also stores every strip there (exp_pad_strip
/// layout), one after the other.
template <class T, class P, class Lanes>
T forward_exp_domain(P const& p, Lanes& lanes, exp_rows<T>& rows, index_t keep_every = 0,
                     simd::pack<T>* table = nullptr) {
  using V = simd::pack<T>;
  constexpr int W = V::width, K = strip_vectors<T>, H = K * W;
  index_t const n = p.x.length;
  index_t const strips = (n + H - 1) / H;
  rows.reset(p.band, n, p.y.length, keep_every);
  T const scale = exp_domain_scale<T>(p.smooth);
  lanes.begin_pair(p.cost, p.x, p.y);
  exp_value<T> last[K];
  for (index_t s = 0; s < strips; ++s) {
    strip_geometry<T> const geo(p.band, n, s * H);
    lanes.begin_strip(s * H);
    rows.keep(s);
    exp_forward_strip(lanes, geo, scale, rows.roll_m.data(), rows.roll_k.data(),
                      table ? exp_pad_strip(table) : nullptr, last);
    if (table) table += exp_strip_packs(geo);
    lanes.end_strip();
  }
  lanes.end_pair();
  int const o = static_cast<int>((n - 1) % H);
  return exp_domain_result(p.smooth.gamma, last[o / W].m[o % W], last[o / W].k[o % W]);
}

}  // namespace resilin::host_detail
