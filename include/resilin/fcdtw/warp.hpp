#pragma once
// Piecewise-linear warps phi with K + 1 knot values v on a grid g_0 = 0 < ... < g_K = 1
// (uniform g_j = j / K by default), built from K logits r (spec/cdtw.md B.3.5, B.4.1, B.4.3):
//   softplus_cumsum (default): s_i = softplus(r_i), p_i = s_i / (sum s + 1e-12), v_j = sum_{i<j} p_i
//   softmax_cumsum:            p = softmax(r),                               v_j = sum_{i<j} p_i
// then v is clamped to [0, 1] with v_0 = 0 and v_K = 1 forced. Zero logits give the identity.
// logits_backward() maps dF/dv to dF/dr (B.3.6). Everything here is RESILIN_HD and writes into
// caller-provided buffers.
#include <cmath>
#include <concepts>
#include <string>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/math.hpp>
#include <resilin/fcdtw/interpolant.hpp>

namespace resilin::fcdtw {

enum class warp_map { softplus_cumsum, softmax_cumsum };

namespace detail {
/// "" for one of warp_map's values, else why not (an integer cast to it).
inline std::string option_error(warp_map m) {
  if (m == warp_map::softplus_cumsum || m == warp_map::softmax_cumsum) return {};
  return resilin::detail::message("map must be softplus_cumsum or softmax_cumsum, got ", static_cast<int>(m));
}

/// Throws resilin::invalid_argument with e unless it is empty (an option_error()).
inline void require_no_error(std::string const& e) { resilin::detail::require(e.empty(), e); }
}  // namespace detail

/// A PL warp: values (K + 1) on grid (K + 1 knots, uniform when grid.knots is null).
template <class T>
struct warp_view {
  T const* values = nullptr;
  knot_grid<T> grid;

  RESILIN_HD index_t segments() const noexcept { return grid.size - 1; }
  RESILIN_HD T knot(index_t j) const noexcept { return grid[j]; }
  RESILIN_HD T operator[](index_t j) const noexcept { return values[j]; }
};

/// The warp with values v (K + 1 of them) on the uniform grid j / K.
template <class T>
RESILIN_HD constexpr warp_view<T> uniform_warp(T const* v, index_t segments) noexcept {
  return {v, knot_grid<T>{nullptr, segments + 1}};
}

/// phi(t), phi'(t) and where t falls: phi(t) = (1 - w) v_j + w v_{j+1} on segment j.
template <class T>
struct warp_point {
  T phi;
  T slope;
  index_t segment;
  T w;
};

/// Evaluates phi and phi' at t in [0, 1] (the right-hand slope at an interior knot, as locate()).
template <class T>
RESILIN_HD warp_point<T> evaluate(warp_view<T> phi, T t) noexcept {
  T const tc = t < T(0) ? T(0) : (t > T(1) ? T(1) : t);
  index_t const j = phi.grid.locate(tc);
  T const g0 = phi.grid[j], h = phi.grid[j + 1] - g0;
  T const w = (tc - g0) / h;
  T const v0 = phi.values[j], v1 = phi.values[j + 1];
  return {(T(1) - w) * v0 + w * v1, (v1 - v0) / h, j, w};
}

/// The pullback of evaluate(): dv += phi_bar * dphi/dv + slope_bar * dphi'/dv. Only v_j and
/// v_{j+1} move: dphi/dv = (1 - w, w), dphi'/dv = (-1/h, 1/h).
template <class T>
RESILIN_HD void evaluate_backward(warp_view<T> phi, warp_point<T> p, T phi_bar, T slope_bar,
                                  T* dv) noexcept {
  T const h = phi.grid[p.segment + 1] - phi.grid[p.segment];
  dv[p.segment] += (T(1) - p.w) * phi_bar - slope_bar / h;
  dv[p.segment + 1] += p.w * phi_bar + slope_bar / h;
}

namespace detail {
template <std::floating_point T>
RESILIN_HD inline T log1p(T x) noexcept {
#if RESILIN_DEVICE_PASS
  if constexpr (std::same_as<T, float>) return ::log1pf(x); else return ::log1p(x);
#else
  return std::log1p(x);
#endif
}
/// exp(-|r|): the one exponential of softplus(r) and sigmoid(r).
template <class T>
RESILIN_HD inline T exp_neg_abs(T r) noexcept {
  return math::exp(r > T(0) ? -r : r);
}
/// softplus(r) = log(1 + e^r) from e = exp_neg_abs(r), without overflow for large r and
/// accurate for very negative r.
template <class T>
RESILIN_HD inline T softplus_from(T r, T e) noexcept {
  return (r > T(0) ? r : T(0)) + log1p(e);
}
template <class T>
RESILIN_HD inline T softplus(T r) noexcept {
  return softplus_from(r, exp_neg_abs(r));
}
/// sigmoid(r) = softplus'(r) from e = exp_neg_abs(r), without overflow for any r.
template <class T>
RESILIN_HD inline T sigmoid_from(T r, T e) noexcept {
  return r >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
}
template <class T>
RESILIN_HD inline T sigmoid(T r) noexcept {
  return sigmoid_from(r, exp_neg_abs(r));
}
/// p_i from its logit, the softmax shift m and the normaliser.
template <class T>
RESILIN_HD inline T probability(warp_map map, T r, T m, T total) noexcept {
  return (map == warp_map::softplus_cumsum ? softplus(r) : math::exp(r - m)) / total;
}
template <class T>
RESILIN_HD constexpr T normaliser_eps() noexcept { return static_cast<T>(1e-12); }

/// The increments p (K) into p (may alias nothing else). With e (softplus_cumsum only), also
/// e_i = exp_neg_abs(r_i). Returns the softplus normaliser S + 1e-12 when e was filled and
/// p_i = softplus(r_i) / S' with it, which logits_backward_kept() reuses; else 0 (softmax, no
/// e, or a sum that overflowed and was rescaled).
template <class T>
RESILIN_HD T increments(warp_map map, T const* r, index_t K, T* p, T* e = nullptr) noexcept {
  T total = T(0);
  bool kept = false;
  if (map == warp_map::softplus_cumsum) {
    T largest = T(0);
    for (index_t i = 0; i < K; ++i) {
      T const ei = exp_neg_abs(r[i]);
      if (e) e[i] = ei;
      total += (p[i] = softplus_from(r[i], ei));
      largest = p[i] > largest ? p[i] : largest;
    }
    total += normaliser_eps<T>();
    kept = e != nullptr;
    if (!(total < math::infinity<T>()) && largest > T(0)) {
      // logits near the largest finite value: the sum overflowed (equal logits of 1e308 gave
      // a step, not the identity); the same ratios from the increments scaled by the largest
      total = T(0);
      for (index_t i = 0; i < K; ++i) total += (p[i] /= largest);
      total += normaliser_eps<T>() / largest;
      kept = false;
    }
  } else {
    T m = r[0];
    for (index_t i = 1; i < K; ++i) m = r[i] > m ? r[i] : m;
    for (index_t i = 0; i < K; ++i) total += (p[i] = math::exp(r[i] - m));
  }
  for (index_t i = 0; i < K; ++i) p[i] /= total;
  return kept ? total : T(0);
}

/// v (K + 1) from the increments p (K): their clamped cumulative sum; v_0 = 0, v_K = 1.
template <class T>
RESILIN_HD void cumulate(T const* p, index_t K, T* v) noexcept {
  v[0] = T(0);
  T acc = T(0);
  for (index_t j = 1; j <= K; ++j) {
    acc += p[j - 1];
    v[j] = acc < T(1) ? acc : T(1);  // p >= 0, so acc >= 0: monotone after the clamp too
  }
  v[K] = T(1);
}

/// warp_from_logits() that also keeps, in p and e (K each), the increments and exponentials
/// logits_backward_kept() needs; returns increments()' normaliser (0: nothing kept).
template <class T>
RESILIN_HD T warp_from_logits_kept(warp_map map, T const* r, index_t K, T* v, T* p, T* e) noexcept {
  T const total = increments(map, r, K, p, e);
  cumulate(p, K, v);
  return total;
}

/// gp (K) from dF/dv (K + 1): gp_i = sum_{i<j<K} dv_j (the free knots 1..K-1).
template <class T>
RESILIN_HD void knot_suffix_sums(T const* dv, index_t K, T* gp) noexcept {
  T acc = T(0);
  for (index_t i = K - 1; i >= 0; --i) {
    gp[i] = acc;
    acc += (i >= 1) ? dv[i] : T(0);
  }
}
}  // namespace detail

/// v (K + 1) from logits r (K >= 1): monotone, in [0, 1], v_0 = 0, v_K = 1, finite for every
/// finite r (flat segments allowed). Uses v[1..K] as scratch for the increments.
template <class T>
RESILIN_HD void warp_from_logits(warp_map map, T const* r, index_t K, T* v) noexcept {
  detail::increments(map, r, K, v + 1);
  detail::cumulate(v + 1, K, v);  // reads p_{j-1} = v[j] before it writes v[j]
}

/// The identity warp on the uniform grid: v_j = j / K (what zero logits give up to rounding);
/// K >= 1 (K = 0, a single knot, gets v_0 = 0, not 0 / 0).
template <class T>
RESILIN_HD void identity_warp(index_t K, T* v) noexcept {
  if (K <= 0) {
    v[0] = T(0);
    return;
  }
  for (index_t j = 0; j <= K; ++j) v[j] = static_cast<T>(j) / static_cast<T>(K);
}

/// dF/dr (K) from dF/dv (K + 1) at logits r. v_0 and v_K are forced, so dv[0] and dv[K] do not
/// reach the logits (with the forced v_K = 1 the adjoint of the last value cancels exactly).
/// dr may not alias r or dv.
///   softplus: dr_i = (gp_i - sum_l p_l gp_l) / S * sigmoid(r_i),  gp_i = sum_{i<j<K} dv_j
///   softmax:  dr_i = p_i (gp_i - sum_l p_l gp_l)
template <class T>
RESILIN_HD void logits_backward(warp_map map, T const* r, index_t K, T const* dv, T* dr) noexcept {
  detail::knot_suffix_sums(dv, K, dr);  // gp into dr
  // Recompute p on the fly (no scratch): the normaliser first.
  T total = T(0), m = T(0);
  if (map == warp_map::softplus_cumsum) {
    for (index_t i = 0; i < K; ++i) total += detail::softplus(r[i]);
    total += detail::normaliser_eps<T>();
  } else {
    m = r[0];
    for (index_t i = 1; i < K; ++i) m = r[i] > m ? r[i] : m;
    for (index_t i = 0; i < K; ++i) total += math::exp(r[i] - m);
  }
  T mean = T(0);
  for (index_t i = 0; i < K; ++i) mean += detail::probability(map, r[i], m, total) * dr[i];
  for (index_t i = 0; i < K; ++i) {
    T const centred = dr[i] - mean;
    dr[i] = map == warp_map::softplus_cumsum ? centred / total * detail::sigmoid(r[i])
                                             : detail::probability(map, r[i], m, total) * centred;
  }
}

namespace detail {
/// logits_backward() for softplus_cumsum from what warp_from_logits_kept() kept at the same
/// logits (p, e and its non-zero normaliser `total`): the same bits, without the three
/// exponentials and two logarithms per logit that recomputing them costs.
template <class T>
RESILIN_HD void logits_backward_kept(T const* r, index_t K, T const* dv, T const* p, T const* e,
                                     T total, T* dr) noexcept {
  knot_suffix_sums(dv, K, dr);  // gp into dr
  T mean = T(0);
  for (index_t i = 0; i < K; ++i) mean += p[i] * dr[i];
  for (index_t i = 0; i < K; ++i) dr[i] = (dr[i] - mean) / total * sigmoid_from(r[i], e[i]);
}
}  // namespace detail

namespace detail {
/// The logit whose increment is q / K of the warp (q = 1 at the identity, q > 0), up to the
/// normalisation that warp_from_logits() applies to all of them.
template <std::floating_point T>
T logit_of_increment(warp_map map, T q) {
  if (map == warp_map::softmax_cumsum) return std::log(q);
  T const s = q * std::log(T(2));  // softplus^{-1}(q log 2), stable at both ends
  return s > T(1) ? s + std::log1p(-std::exp(-s)) : std::log(std::expm1(s));
}
}  // namespace detail

/// Host helper, the right inverse of warp_from_logits() for a warm start from given knots v
/// (K + 1, monotone from 0 to 1): logits r (K) with warp_from_logits(map, r) = v up to
/// rounding. It scales so that the identity maps to r = 0; a flat increment (no inverse) gets
/// a logit whose increment is below 1e-30 of the largest one.
template <std::floating_point T>
void logits_from_knots(warp_map map, T const* v, index_t K, T* r) {
  detail::require_no_error(detail::option_error(map));
  T const floor = static_cast<T>(1e-30);
  for (index_t i = 0; i < K; ++i) {
    T const p = v[i + 1] - v[i];
    r[i] = detail::logit_of_increment(map, (p > floor ? p : floor) * static_cast<T>(K));
  }
}

namespace detail {
/// Host validation of a warp: K >= 1, a valid grid, finite values in [0, 1], non-decreasing,
/// v_0 = 0 and v_K = 1. Throws resilin::invalid_argument naming the knot and value.
template <class T>
void check_warp(warp_view<T> const& phi, char const* name = "warp") {
  using resilin::detail::require;
  require(phi.grid.size >= 2, name, ": needs >= 1 segment (2 knots), got ", phi.grid.size,
          " knots");
  require(phi.values != nullptr, name, ": values are null");
  check_knot_grid(phi.grid, name);
  index_t const K = phi.segments();
  require(phi.values[0] == T(0), name, ": v_0 must be 0, got ", phi.values[0]);
  require(phi.values[K] == T(1), name, ": v_K must be 1, got ", phi.values[K]);
  for (index_t j = 1; j <= K; ++j)
    require(phi.values[j] >= phi.values[j - 1] && phi.values[j] <= T(1), name,
            ": values must be non-decreasing in [0, 1], got v_", j - 1, " = ", phi.values[j - 1],
            " and v_", j, " = ", phi.values[j]);
}
}  // namespace detail

}  // namespace resilin::fcdtw
