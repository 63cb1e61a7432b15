#pragma once
// The vectorised lane engine of soft_msm_cost (see lane_cost.hpp): x_i and x_{i-1} of the strip
// in registers, y reversed and channel-major with padding (y_j at p, y_{j-1} at p + 1), the
// transition math of cost/soft_msm.hpp instantiated on SIMD packs, gradients accumulated as the
// DTW engine does plus one register set for the partials that land on x_{i-1}.
#include <cmath>
#include <limits>
#include <vector>
#include <resilin/backend/host/lane_cost.hpp>
#include <resilin/backend/host/packs.hpp>
#include <resilin/backend/host/simd.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/recursion.hpp>
#include <resilin/cost/soft_msm.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// x rows (x_i and x_{i-1}) of the strip in registers, y reversed and channel-major with
/// padding (y_j at p, y_{j-1} at p + 1), gradients accumulated as dtw_lane_cost does, plus one
/// more register set for the partials that land on x_{i-1}. The backward takes the costs and
/// the partials of a cell from one evaluation of its transitions (costs_and_partials, then
/// gradient_terms with the cell's move weights).
///
/// The two transitions into a cell share b^2 = (x_i - y_j)^2 (the move's cost), and their other
/// soft-min argument depends on the row alone (a^2 = (x_i - x_{i-1})^2) or on the column alone
/// ((y_j - y_{j-1})^2). With E = exp(-a^2/gamma) kept per row and per column, a cell needs one
/// exponential for both inner soft-mins, -gamma log(E + exp(-b^2/gamma)), where the min-shifted
/// form (soft_msm_transition) needs one each. Where that sum leaves the normal range (every
/// argument above about 670 gamma in double, 71 gamma in float) a vector takes the min-shifted
/// form instead, so the result keeps its accuracy for any input.
template <class T, class P>
struct soft_msm_lane_cost : strip_series<T, true> {
  using V = simd::pack<T>;
  using base = strip_series<T, true>;
  T c = 1, gamma = 1, eps = T(1e-9);
  T neg_inverse_gamma = -1;
  /// Set by the caller for S(x, x) with both gradients into one buffer (a divergence's self
  /// terms): then the diagonal cells give each transition's two partials on the one sample as
  /// their sum (self_diagonal).
  bool sums_self = false;
  std::vector<T> e_column;        // exp(-(y_j - y_{j-1})^2 / gamma), laid out as the reversed y
  std::vector<V> e_row;           // exp(-(x_i - x_{i-1})^2 / gamma) of the strip's rows

  // Soft-MSM's cost is its own transpose (T is symmetric in p and o, and transposing swaps the
  // up and left moves along with x and y), so the transposed value-only problem uses it as is.
  void begin_pair(transposed_cost<soft_msm_cost<P>> const& cost, series_view<T const> xs,
                  series_view<T const> ys, series_view<T> gxs = {}, series_view<T> gys = {}) {
    begin_pair(cost.inner, xs, ys, gxs, gys);
  }
  void begin_pair(soft_msm_cost<P> const& cost, series_view<T const> xs, series_view<T const> ys,
                  series_view<T> gxs = {}, series_view<T> gys = {}) {
    set_parameters(cost);
    base::bind(xs, ys, gxs, gys);
    if (!this->overflow) this->overflow = !gate_terms_finite(this->largest);
    auto const vectors = static_cast<std::size_t>(xs.channels * strip_vectors<T>);
    partials.resize(2 * vectors);
    diffs.resize(vectors);
    terms.resize(static_cast<std::size_t>(gradient_term_packs(xs.channels)));
    if (!shares_exp()) return;
    // the same pack arithmetic as e_row's, so that swapping x and y swaps the two tables bit
    // for bit (S(x, y) = S(y, x) exactly); y_{j-1} of the last entry is padding (zero)
    constexpr auto width = static_cast<std::size_t>(base::W);
    std::vector<T> yr(this->yrev);
    std::size_t const size = (yr.size() + width - 1) / width * width;
    yr.resize(size + 1, T(0));
    e_column.resize(size);
    for (std::size_t k = 0; k < size; k += width)
      squared_exp(V::load(yr.data() + k) - V::load(yr.data() + k + 1)).store(e_column.data() + k);
  }

  /// c, gamma, eps and the exponentials' scale from the cost (begin_pair; the lock-step groups,
  /// which evaluate channels with add_channel on operands of their own layout).
  void set_parameters(soft_msm_cost<P> const& cost) noexcept {
    c = static_cast<T>(cost.c);
    gamma = static_cast<T>(cost.gamma);
    eps = static_cast<T>(cost.eps);
    if (shares_exp()) neg_inverse_gamma = -math::inverse_temperature(gamma);
  }

  /// Whether pairs whose largest sample magnitude is `magnitude` take the unguarded evaluation
  /// (no overflow guards: strip_series::overflow false and gate_terms_finite), with gamma > 0:
  /// the lock-step groups run only those.
  bool unguarded(T magnitude) const noexcept {
    return shares_exp() && magnitude <= std::numeric_limits<T>::max() / T(8) && gate_terms_finite(magnitude);
  }

  /// exp(-a^2 / gamma) as the E tables hold it (gamma > 0).
  RESILIN_INLINE V squared_exp(V a) const noexcept { return exp(a * a * V(neg_inverse_gamma)); }

  /// One channel of an unguarded vector with gamma > 0, from its operands x_i, x_{i-1}, y_j,
  /// y_{j-1} and the E of its row (x_i - x_{i-1}) and column (y_j - y_{j-1}): adds b^2 to sd and
  /// the up and left transitions to su and sl; with Partials, b to *diff and the transitions'
  /// partials to *pu and *pl. The strips and the lock-step groups evaluate every cell with it.
  template <bool Partials>
  RESILIN_INLINE void add_channel(V xi, V xp, V yj, V yp, V eu, V el, V& sd, V& su, V& sl, V* diff,
                                  transition_partials<V>* pu, transition_partials<V>* pl) const noexcept {
    // below this the sum of the two exponentials is not safely normal
    constexpr T tiny = std::numeric_limits<T>::min() / std::numeric_limits<T>::epsilon();
    V const b = xi - yj;
    V const bb = b * b;
    sd += bb;
    if constexpr (Partials) *diff = b;
    V const eb = exp(bb * V(neg_inverse_gamma));
    V const s_up = eu + eb, s_left = el + eb;
    auto const low_up = s_up < V(tiny), low_left = s_left < V(tiny);
    if (simd::any(low_up | low_left)) [[unlikely]] {
      step3<V> const f = mixed_transitions(low_up, low_left, xi, xp, yj, yp, eu, el, s_up, s_left, pu, pl);
      su += f.up;
      sl += f.left;
      return;
    }
    // the up and left transitions as one value of two packs (packs.hpp): their logarithms and
    // gates run interleaved
    using P2 = simd::packs<T, 2>;
    P2 const s2 = P2::of(s_up, s_left);
    P2 w2(T(0));  // the weights of a^2 in each inner soft-min
    if constexpr (Partials) w2 = P2::of(eu, el) / s2;
    transition_partials<P2> d2;
    // sm = -gamma log(s) is finite: s >= tiny
    P2 const f = detail::gated_transition<P2, T, true, false>(P2::of(xi - xp, yj - yp), P2::of(b, -b),
                                                              log(s2) * -gamma, w2, c, eps,
                                                              Partials ? &d2 : nullptr);
    if constexpr (Partials) {
      *pu = {d2.v.v[0], d2.p.v[0], d2.o.v[0]};
      *pl = {d2.v.v[1], d2.p.v[1], d2.o.v[1]};
    }
    su += f.v[0];
    sl += f.v[1];
  }

  void begin_strip(index_t first_row) {
    base::begin_strip(first_row);
    if (!shares_exp()) return;
    e_row.resize(this->xrows.size());
    for (std::size_t u = 0; u < e_row.size(); ++u) e_row[u] = squared_exp(this->xrows[u] - this->xprev[u]);
  }

  RESILIN_INLINE step3<V> costs(int q, index_t t, typename V::mask) noexcept {
    return evaluate<false>(q, t);
  }

  // The strip forward evaluates two vectors' soft-min cells at once (strip.hpp: pairs_cells).
  static constexpr bool pairs_cells = true;

  // The backward needs a cell's costs (for the move weights) and then the partials of its
  // transitions (for the gradient): both come from one evaluation of each transition, the
  // partials kept per vector and channel until the gradient terms of the same cells are formed.
  static constexpr bool caches_partials = true;
  std::vector<transition_partials<V>> partials;   // (K vectors, channels, 2): up, left
  std::vector<V> diffs;                           // (K vectors, channels): x_i - y_j
  std::vector<V> terms;                           // one vector's gradient terms

  RESILIN_INLINE step3<V> costs_and_partials(int q, index_t t, typename V::mask) noexcept {
    return evaluate<true>(q, t);
  }

  /// Packs of one vector's gradient terms (gradient_terms).
  static index_t gradient_term_packs(index_t channels) noexcept { return 4 * channels; }

  /// Vector q's gradient terms, from its move weights w and the partials of its last
  /// costs_and_partials(): per channel, the derivatives of w . (diag, up, left costs) with
  /// respect to x_i, x_{i-1}, y_j and y_{j-1}. A cell's gradient is its adjoint times these, so
  /// the forward can store them in place of the weights' and partials' products (4 packs per
  /// channel instead of 6 partials and the operands of the move's derivative).
  RESILIN_INLINE void gradient_terms(int q, step3<V> const& w, V* out) const noexcept {
    if (this->overflow) [[unlikely]] write_terms<true>(q, w, out);
    else write_terms<false>(q, w, out);
  }

  /// Adds adjoint a times vector q's gradient terms (zero adjoint outside the band).
  RESILIN_INLINE void accumulate_terms(int q, index_t t, V a, V const* in) noexcept {
    if (this->overflow) [[unlikely]] add_terms<true>(q, t, a, in);
    else add_terms<false>(q, t, a, in);
  }

  /// accumulate_terms of the terms formed now (the backward that recomputes the costs).
  RESILIN_INLINE void accumulate_cached(int q, index_t t, V a, step3<V> const& w) noexcept {
    gradient_terms(q, w, terms.data());
    accumulate_terms(q, t, a, terms.data());
  }

 private:
  /// accumulate_terms; Guard (strip_series::overflow): a zero adjoint (outside the band, or a
  /// cell no path uses) times a term that overflowed contributes 0, not 0 * inf = NaN.
  template <bool Guard>
  RESILIN_INLINE void add_terms(int q, index_t t, V a, V const* in) noexcept {
    index_t const d = this->x.channels, p = this->ypos(q, t);
    for (index_t ch = 0; ch < d; ++ch) {
      auto const u = static_cast<std::size_t>(q * d + ch);
      V const* const k = in + 4 * ch;
      this->gxrows[u] += guarded_product<Guard>(a, k[0]);
      this->gxprev[u] += guarded_product<Guard>(a, k[1]);
      T* const gyp = this->gychannel(ch) + p;
      (V::load(gyp) + guarded_product<Guard>(a, k[2])).store(gyp);
      (V::load(gyp + 1) + guarded_product<Guard>(a, k[3])).store(gyp + 1);
    }
  }

  /// gradient_terms; Guard (strip_series::overflow): a move of zero weight contributes 0 also
  /// where its partial overflowed (samples near the largest finite value), not 0 * inf = NaN.
  template <bool Guard>
  RESILIN_INLINE void write_terms(int q, step3<V> const& w, V* out) const noexcept {
    index_t const d = this->x.channels;
    for (index_t ch = 0; ch < d; ++ch) {
      auto const u = static_cast<std::size_t>(q * d + ch);
      transition_partials<V> const& du = partials[2 * u];
      transition_partials<V> const& dl = partials[2 * u + 1];
      V const move = guarded_product<Guard>(w.diag, V(T(2)) * diffs[u]);
      V* const o = out + 4 * ch;
      o[0] = move + guarded_product<Guard>(w.up, du.v) + guarded_product<Guard>(w.left, dl.o);
      o[1] = guarded_product<Guard>(w.up, du.p);
      o[2] = (guarded_product<Guard>(w.up, du.o) + guarded_product<Guard>(w.left, dl.v)) - move;
      o[3] = guarded_product<Guard>(w.left, dl.p);
    }
  }

  /// Whether the gate's partials h S (a + b) and the sums of up to eight of them stay finite
  /// for every cell, the padding lanes' zero samples included. They grow with gamma and
  /// 1 / sqrt(eps), not only with the samples: h reaches 1 / (2 sqrt(eps)) at u = 0 and S about
  /// -gamma log 2 at a tie (float at gamma = 1e21 with eps = eps_min overflowed, and the padding
  /// lanes' zero adjoints times NaN reached the gradients). Else the pair takes the guarded
  /// evaluation, whose products of a zero weight or adjoint are 0.
  bool gate_terms_finite(T magnitude) const noexcept {
    T const span = math::max(magnitude, T(1));
    T const h = T(0.5) / std::sqrt(eps);
    T const sm = gamma * T(0.6931471805599453) + T(4) * span * span;  // |S| <= gamma log 2 + max(a^2, b^2)
    return h * sm * (T(32) * span) <= std::numeric_limits<T>::max();   // inf and NaN: false
  }

  /// gamma > 0: the E tables are in use (gamma = 0 is the hard min inside the transitions).
  bool shares_exp() const noexcept { return gamma > T(0); }

  /// The step costs of vector q (and, with Partials, its transitions' partials).
  template <bool Partials>
  RESILIN_INLINE step3<V> evaluate(int q, index_t t) noexcept {
    step3<V> const costs = this->overflow ? guarded_costs<Partials>(q, t) : costs_of<Partials, false>(q, t);
    if constexpr (Partials)
      if (sums_self) [[unlikely]] self_diagonal(q, t);
    return costs;
  }

  /// sums_self: at a diagonal cell (i, i) of S(x, x) a transition's v and o are one sample,
  /// whose partials carry stiff terms +-h S a (h up to 1 / (2 sqrt(eps)) at u = 0) that
  /// cancelled only through separate sums (x's per strip, y's per pair): a soft-MSM
  /// divergence's gradient came out 17 % off in float at gamma = 300. The
  /// lane gives that sample their sum, -dT/dp (the three partials sum to 0), whose stiff term
  /// h b S is 0 there (b = 0), and nothing through the other slot; the move's partials are 0.
  [[gnu::noinline, gnu::cold]] void self_diagonal(int q, index_t t) noexcept {
    index_t const twice = t - this->i0;  // lane o = qW + k is at (i0 + o, t - o): diagonal at 2o
    if (twice < 0 || twice % 2 != 0) return;
    index_t const k = twice / 2 - q * base::W;
    if (k < 0 || k >= base::W) return;
    int const lane = static_cast<int>(k);
    for (index_t ch = 0; ch < this->x.channels; ++ch) {
      auto const u = static_cast<std::size_t>(q * this->x.channels + ch);
      transition_partials<V>& up = partials[2 * u];     // v = x_i, o = y_j: one sample here
      transition_partials<V>& left = partials[2 * u + 1];  // v = y_j, o = x_i
      up.v.set(lane, -up.p[lane]);
      up.o.set(lane, T(0));
      left.o.set(lane, -left.p[lane]);
      left.v.set(lane, T(0));
    }
  }

  /// evaluate() for pairs whose differences may overflow (strip_series::overflow): the
  /// min-shifted transitions with their guards against 0 * inf. Out of line, so that the hot
  /// loop is the same code as without the guards (inlined, they cost value+grad about 20 %).
  template <bool Partials>
  [[gnu::noinline, gnu::cold]] step3<V> guarded_costs(int q, index_t t) noexcept {
    return costs_of<Partials, true>(q, t);
  }

  /// The costs of evaluate(); Guarded: the min-shifted form with MayOverflow throughout.
  template <bool Partials, bool Guarded>
  RESILIN_INLINE step3<V> costs_of(int q, index_t t) noexcept {
    index_t const d = this->x.channels, p = this->ypos(q, t);
    V sd(T(0)), su(T(0)), sl(T(0));
    for (index_t ch = 0; ch < d; ++ch) {
      auto const u = static_cast<std::size_t>(q * d + ch);
      V const xi = this->xrows[u], xp = this->xprev[u];
      T const* yb = this->ychannel(ch) + p;
      V const yj = V::load(yb), yp = V::load(yb + 1);
      transition_partials<V>* const pu = Partials ? &partials[2 * u] : nullptr;
      transition_partials<V>* const pl = Partials ? &partials[2 * u + 1] : nullptr;
      if (!Guarded && shares_exp()) {
        add_channel<Partials>(xi, xp, yj, yp, e_row[u], V::load(e_column.data() + ch * this->stride + p), sd,
                              su, sl, Partials ? &diffs[u] : nullptr, pu, pl);
        continue;
      }
      V const b = xi - yj;
      sd += b * b;
      if constexpr (Partials) diffs[u] = b;
      su += detail::soft_msm_transition<V, T, Guarded>(xi, xp, yj, c, gamma, eps, pu);
      sl += detail::soft_msm_transition<V, T, Guarded>(yj, yp, xi, c, gamma, eps, pl);
    }
    return {sd, su, sl};
  }

  /// The up and left transitions of a vector in which some lanes need the min-shifted form
  /// (low_*: the sum of the two exponentials is not safely normal): that form in those lanes,
  /// the shared one in the others. Lane by lane, so that a cell's cost does not depend on the
  /// cells beside it in the vector, which differ between S(x, y) and S(y, x). Out of line: the
  /// hot loop keeps its registers (inlined, this path cost the common one 5-19 %). Pairs whose
  /// differences may overflow never come here (guarded_costs).
  [[gnu::noinline, gnu::cold]] step3<V> mixed_transitions(
      typename V::mask low_up, typename V::mask low_left, V xi, V xp, V yj, V yp, V eu, V el,
      V s_up, V s_left, transition_partials<V>* pu, transition_partials<V>* pl) const noexcept {
    bool const want = pu != nullptr;
    auto const one = [&](typename V::mask low, V v, V prev, V other, V e, V s,
                         transition_partials<V>* out) {
      transition_partials<V> ds, dm;
      V const shared = detail::gated_transition<V, T, false, false>(v - prev, v - other, log(s) * -gamma,
                                                      want ? e / s : V(T(0)), c, eps,
                                                      want ? &ds : nullptr);
      V const minshift = detail::soft_msm_transition<V, T, false>(v, prev, other, c, gamma, eps,
                                                           want ? &dm : nullptr);
      if (out)
        *out = {simd::select(low, dm.v, ds.v), simd::select(low, dm.p, ds.p),
                simd::select(low, dm.o, ds.o)};
      return simd::select(low, minshift, shared);
    };
    V const up = one(low_up, xi, xp, yj, eu, s_up, pu);
    V const left = one(low_left, yj, yp, xi, el, s_left, pl);
    return {V(T(0)), up, left};
  }
};

template <class T, class P>
struct lane_cost_for<T, soft_msm_cost<P>> { using type = soft_msm_lane_cost<T, P>; };
template <class T, class P>
struct lane_cost_for<T, transposed_cost<soft_msm_cost<P>>> { using type = soft_msm_lane_cost<T, P>; };

}  // namespace resilin::host_detail
