#pragma once
// The sharp values of a measure on the host: the expected cost of the alignment, its gradient,
// its divergence, and the entropy of the alignment distribution, from the tangent passes of
// tangent.hpp along the step costs (and along the cells' own entropy). Inputs are validated by
// the caller (sharp.hpp).
#include <limits>
#include <vector>
#include <resilin/backend/host/pair.hpp>
#include <resilin/backend/host/tangent.hpp>
#include <resilin/core/math.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/recursion.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// A forward-only tangent of one pair and channel in two rows along the shorter series (the
/// problem transposed when y is longer, as tangent_pass transposes it: the paths and their
/// costs stay, and the band is symmetric). `none` when the pair has no alignment.
template <class T, class Cost, class Smooth, class Dir>
T forward_tangent(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                  Dir const& dir, T none) {
  T s = T(0), l = T(0);
  if (y.length > x.length)
    l = dir.transposed_to([&](auto const& along) { return tangent_value(tie_preserving_transposed(m), y, x, along, &s); });
  else
    l = tangent_value(m, x, y, dir, &s);
  return s < math::infinity<T>() ? l : none;
}

/// The sum over the channels c of x and y of f(one, x_c, y_c, c) for an independent-channels
/// measure with several channels, else f(m, x, y, 0).
template <class T, class Cost, class Smooth, class F>
T per_channel_sum(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y, F&& f) {
  if (!m.independent_channels || x.channels == 1) return f(m, x, y, index_t(0));
  auto const one = m.single_channel();
  std::vector<T> buffer(static_cast<std::size_t>(x.length + y.length));
  T sum = T(0);
  for (index_t c = 0; c < x.channels; ++c)
    sum += f(one, copy_channel(x, c, buffer.data()), copy_channel(y, c, buffer.data() + x.length), c);
  return sum;
}

/// How many self terms a divergence's sharp value takes of each series: one per channel for
/// independent channels, else one.
template <class Cost, class Smooth>
index_t sharp_self_terms(measure<Cost, Smooth> const& m, index_t channels) noexcept {
  return m.independent_channels ? channels : 1;
}

/// The sharp values sharp(x_c, x_c) a divergence subtracts (per channel for independent
/// channels, sharp_self_terms of them) to out.
template <class T, class Cost, class Smooth>
void sharp_self_values(measure<Cost, Smooth> const& m, series_view<T const> x, T* out) {
  per_channel_sum(m, x, x, [out](auto const& one, series_view<T const> xc, series_view<T const>, index_t c) {
    out[c] = forward_tangent(one, xc, xc, along_costs{}, math::infinity<T>());
    return T(0);
  });
}

/// The sharp value with a divergence's self terms given (sharp_self_values of x and y; not read
/// when m is no divergence): the expected cost of the alignment, or its divergence.
template <class T, class Cost, class Smooth>
T sharp_value_given_self(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                         T const* self_x, T const* self_y) {
  return per_channel_sum(m, x, y, [&](auto const& one, series_view<T const> xc, series_view<T const> yc, index_t c) {
    T const sxy = forward_tangent(one, xc, yc, along_costs{}, math::infinity<T>());
    return m.divergence ? divergence_of(sxy, self_x[c], self_y[c]) : sxy;
  });
}

/// The sharp value: the expected cost of the alignment, or its divergence when m.divergence.
template <class T, class Cost, class Smooth>
T sharp_value(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y) {
  if (!m.divergence) return sharp_value_given_self<T>(m, x, y, nullptr, nullptr);
  auto const terms = static_cast<std::size_t>(sharp_self_terms(m, x.channels));
  std::vector<T> self(2 * terms);
  sharp_self_values(m, x, self.data());
  sharp_self_values(m, y, self.data() + terms);
  return sharp_value_given_self(m, x, y, self.data(), self.data() + terms);
}

/// The sharp value, adding seed times its gradient to gx and gy (which may alias for y = x). ws:
/// buffers to reuse (null: the call's own).
template <class T, class Cost, class Smooth>
T sharp_value_and_grad(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                       series_view<T> gx, series_view<T> gy, T seed, tangent_workspace<T>* ws = nullptr) {
  if (m.independent_channels && x.channels > 1) {  // the sum of per-channel measures
    auto const one = m.single_channel();
    std::vector<T> buffer;
    return sum_over_channels(x, y, gx, gy, buffer, [&](auto xc, auto yc, auto gxc, auto gyc) {
      return sharp_value_and_grad(one, xc, yc, gxc, gyc, seed, ws);
    });
  }
  auto const pass = [&](series_view<T const> a, series_view<T const> b, series_view<T> ga,
                        series_view<T> gb, T s) {
    T value = T(0);
    T const l = tangent_pass(m, a, b, along_costs{}, ga, gb, s, &value, {}, ws);
    return value < math::infinity<T>() ? l : math::infinity<T>();  // no alignment: +inf
  };
  T const sxy = pass(x, y, gx, gy, seed);
  if (!m.divergence) return sxy;
  // as value_and_grad: the self terms depend on their series through both arguments
  T const sxx = pass(x, x, gx, gx, -seed / T(2));
  T const syy = pass(y, y, gy, gy, -seed / T(2));
  return divergence_of(sxy, sxx, syy);
}

/// The entropy of the alignment distribution (summed over independent channels); NaN when a pair
/// has no alignment (S = +inf: no distribution).
template <class T, class Cost, class Smooth>
T alignment_entropy(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y) {
  return per_channel_sum(m, x, y, [](auto const& one, series_view<T const> xc, series_view<T const> yc, index_t) {
    return forward_tangent(one, xc, yc, along_entropy{}, std::numeric_limits<T>::quiet_NaN());
  });
}

}  // namespace resilin::host_detail
