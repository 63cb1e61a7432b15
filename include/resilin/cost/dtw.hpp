#pragma once
// dtw_cost<Distance>: every move into (i, j) costs delta(x_i, y_j), a point-wise distance over
// the channels. Squared Euclidean by default (Cuturi & Blondel; tslearn; the UCR archive),
// also L1 and half-squared (Blondel, Mensch & Vert's divergence code).
#include <concepts>
#include <resilin/core/concepts.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/views.hpp>

namespace resilin {

namespace detail {
/// The value() of the library's distances: D::accumulate over the channels, in order.
template <class D, class T>
RESILIN_HD T accumulate_channels(T const* a, T const* b, index_t channels) noexcept {
  T s = T(0);
  for (index_t c = 0; c < channels; ++c) s = D::accumulate(s, a[c] - b[c]);
  return s;
}
}  // namespace detail

/// delta(a, b) = sum_c (a_c - b_c)^2; d delta / d a_c = 2 (a_c - b_c).
struct squared_euclidean {
  static constexpr char const* name = "squared Euclidean";
  template <class V>  // one channel's term of delta, for a - b = diff (V: a scalar or a pack)
  RESILIN_HD static V term(V diff) noexcept { return diff * diff; }
  template <class T>  // sum + term(diff), one rounding
  RESILIN_HD static T accumulate(T sum, T diff) noexcept { return math::fma(diff, diff, sum); }
  template <class T>
  RESILIN_HD static T value(T const* a, T const* b, index_t channels) noexcept {
    return detail::accumulate_channels<squared_euclidean>(a, b, channels);
  }
  template <class T>  // d delta / d a_c (the partial for b is its negative)
  RESILIN_HD static T partial(T a, T b) noexcept { return T(2) * (a - b); }
};

/// delta(a, b) = 1/2 sum_c (a_c - b_c)^2. Where diff^2 overflows and diff^2 / 2 does not, the
/// half is taken first (elsewhere diff^2 * 0.5, whose halving is exact: the same bits whether or
/// not a build fuses it into the sum it lands in, as every engine's must be).
struct half_squared_euclidean {
  static constexpr char const* name = "half squared Euclidean";
  template <class V>
  RESILIN_HD static V term(V diff) noexcept {
    using math::select;
    V const t = diff * diff * 0.5f;
    return select(math::is_finite(t), t, (diff * 0.5f) * diff);
  }
  template <class T>  // sum + term(diff), the last multiplication and the addition rounded once
  RESILIN_HD static T accumulate(T sum, T diff) noexcept {
    T const sq = diff * diff;
    if (sq < math::infinity<T>()) return math::fma(sq, T(0.5), sum);
    // the half rounded before the sum, as the vectorised engines add term(diff)
    return sum + math::rounded_product(diff * T(0.5), diff);
  }
  template <class T>
  RESILIN_HD static T value(T const* a, T const* b, index_t channels) noexcept {
    return detail::accumulate_channels<half_squared_euclidean>(a, b, channels);
  }
  template <class T>
  RESILIN_HD static T partial(T a, T b) noexcept { return a - b; }
};

/// delta(a, b) = sum_c |a_c - b_c|; its partial at a_c = b_c is taken as 0 (a subgradient).
struct l1_distance {
  static constexpr char const* name = "L1";
  template <class V>
  RESILIN_HD static V term(V diff) noexcept {
    using math::max;
    return max(diff, -diff);
  }
  template <class T>  // sum + term(diff)
  RESILIN_HD static T accumulate(T sum, T diff) noexcept { return sum + term(diff); }
  template <class T>
  RESILIN_HD static T value(T const* a, T const* b, index_t channels) noexcept {
    return detail::accumulate_channels<l1_distance>(a, b, channels);
  }
  template <class T>
  RESILIN_HD static T partial(T a, T b) noexcept {
    using math::select;
    return select(b < a, T(1), select(a < b, T(-1), T(0)));
  }
};

template <class D>
concept point_distance = requires(float const* a, double const* b, index_t c) {
  { D::value(a, a, c) } -> std::same_as<float>;
  { D::value(b, b, c) } -> std::same_as<double>;
  { D::partial(1.0, 2.0) } -> std::same_as<double>;
};

/// The library's own point distances: the value of each is the in-order sum over the channels
/// of term(a_c - b_c), which the host's vectorised engine and the GPU's distance tiles compute
/// themselves (a user's distance goes through value() and partial() only). Each step of the
/// scalar sum is accumulate(sum, a_c - b_c), whose rounding is written out (an fma where a
/// product meets the sum), so the GPU's distance tiles, which accumulate the same way, give the
/// bits of value() whatever floating-point contraction the compiler applies.
template <class D>
concept vector_distance = std::same_as<D, squared_euclidean> ||
                          std::same_as<D, half_squared_euclidean> || std::same_as<D, l1_distance>;

/// The DTW cost model: the three moves into (i, j) all cost delta(x_i, y_j).
template <point_distance Distance = squared_euclidean>
struct dtw_cost {
  using distance_type = Distance;

  template <class T>
  RESILIN_HD step3<T> step(series_view<T const> x, series_view<T const> y, index_t i,
                           index_t j) const noexcept {
    T const d = Distance::value(x.row(i), y.row(j), x.channels);
    return {d, d, d};
  }

  template <class T>
  RESILIN_HD void step_grad(series_view<T const> x, series_view<T const> y, index_t i, index_t j,
                            step3<T> usage, series_view<T> gx, series_view<T> gy) const noexcept {
    T const u = usage.diag + usage.up + usage.left;  // expected visits of cell (i, j)
    if (u == T(0)) return;
    T const* xi = x.row(i);
    T const* yj = y.row(j);
    T* gxi = gx.row(i);
    T* gyj = gy.row(j);
    for (index_t c = 0; c < x.channels; ++c) {
      T const p = u * Distance::partial(xi[c], yj[c]);
      gxi[c] += p;
      gyj[c] -= p;
    }
  }
};

}  // namespace resilin
