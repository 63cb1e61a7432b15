#pragma once
// Sharp values: the expected cost of the soft alignment, and the entropy of the alignment
// distribution. A soft measure is S(x, y) = -gamma log sum_paths exp(-C(path) / gamma), the
// smoothed minimum over the alignment paths; the paths' Gibbs weights
// p(path) = exp((S - C(path)) / gamma) are its alignment distribution (E is their occupancy).
//   sharp value      E_p[C(path)]: the cost of the soft alignment itself, without the entropy
//                    term that makes S smaller than every path's cost (S = sharp - gamma H).
//                    For soft-DTW it is <E, Delta>, the "sharp soft-DTW" of Blondel, Mensch &
//                    Vert (AISTATS 2021, spec/softdtw.md §3.7). It lies between DTW and the mean
//                    path cost, tends to DTW as gamma -> 0, and is not smaller than S.
//   sharp divergence the sharp value of a divergence measure: sharp(x, y) - sharp(x, x)/2 -
//                    sharp(y, y)/2, 0 for y = x.
//   entropy          H = -sum_paths p log p, in [0, log |paths|]; 0 for hard_min.
// Every cost model (the path cost sums its step costs: warp penalties and MSM's split and merge
// costs included) and both smoothings (hard_min: the sharp value is the hard value, its gradient
// the hard gradient). Host only and scalar, by tangent passes of the recursion along its step
// costs (backend/host/tangent.hpp), whose rows run along the longer series (hard measures' ties
// mirrored when y is longer, so that they pick value_and_grad's moves): the values in two rows of
// the shorter series' length, the gradients with R, its tangent and the entropy of the alignments
// into each cell at the cells of the band (three values per cell) up to 256 MiB, beyond that in segments of ceil(sqrt(n)) rows of the longer
// series (n) recomputed from the row above each, and the move weights up to 32 MB.
// Symmetry: where n = m the rows run along x, so sharp(x, y) and sharp(y, x) (and the sharp
// divergence, the entropy) agree to rounding, not bit for bit as S(x, y) = S(y, x) does (a
// reviewer: 2.0555470415991159 and ...155 for two 2-sample series, in 4 of 16 random pairs).
#include <span>
#include <vector>
#include <resilin/alignment.hpp>
#include <resilin/backend/host/sharp.hpp>
#include <resilin/core/concepts.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/thread_pool.hpp>
#include <resilin/core/validate.hpp>

namespace resilin {

/// The expected cost of the soft alignment of x and y, E_p[C(path)]; for a divergence measure
/// the sharp divergence. Independent channels: the sum over the channels. The bits of
/// sharp_value_and_grad's value (both keep the rows along the longer series; a hard measure's
/// value is R itself in either orientation).
template <class Cost, class Smooth, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
value_of<X> sharp_value(measure<Cost, Smooth> const& m, X x, Y y) {
  using T = value_of<X>;
  detail::check_measure<Cost, Smooth, T>(m);
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_pair(xc, yc);
  return host_detail::sharp_value(m, xc, yc);
}

/// sharp_value, with its gradient written to gx (shape of x) and gy (shape of y), under
/// value_and_grad's rules: overwritten, apart from x, y and each other, except one buffer for
/// y = x (the derivative with respect to x, both partials summed). Where alignments tie exactly
/// and gamma log k falls below the rounding of R (gamma below about 1e-14 |S| in double), R
/// rounds to the tied cost and each cell weighs its tied moves alike rather than by the
/// alignments through them (alignment_entropy's limit): the gradient is then a mixture of the
/// tied optimal paths' cost gradients, bounded, but not their uniform mixture that gamma -> 0
/// tends to (17 tied paths: entries 3.39, -11.32 for 4.94, -9.76 at gamma = 1e-15 and below).
template <class Cost, class Smooth, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
value_of<X> sharp_value_and_grad(measure<Cost, Smooth> const& m, X x, Y y,
                                 series_view<value_of<X>> gx, series_view<value_of<X>> gy) {
  using T = value_of<X>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  static_assert(second_order_smoothing<Smooth, T>, "the smoothing has no weights_tangent");
  detail::check_measure<Cost, Smooth, T>(m);
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_gradient_call(xc, yc, gx, gy);
  detail::zero(gx);
  detail::zero(gy);
  return host_detail::sharp_value_and_grad(m, xc, yc, gx, gy, T(1));
}

/// The entropy H = -sum_paths p log p of the alignment distribution of x and y (the sum over
/// the channels for independent channels): 0 for a single path or hard_min, log |paths| when
/// every path is as likely; NaN when the pair has no alignment (S = +inf). Computed by its chain
/// rule over the moves (each cell adds its last move's entropy, weighted by E), so it stays
/// accurate where (sharp - S) / gamma would cancel. Not where gamma log k falls below the
/// rounding of R for k tied alignments (gamma below about 1e-14 |S| in double): R then rounds to
/// the tied cost, and each cell weighs its moves rather than the alignments through them (six
/// tied alignments gave log 6 = 1.7918 at gamma = 1e-12, 1.4979 at 1e-20).
template <class Cost, class Smooth, series_like X, series_like Y>
  requires std::same_as<value_of<X>, value_of<Y>>
value_of<X> alignment_entropy(measure<Cost, Smooth> const& m, X x, Y y) {
  auto const xc = detail::as_const(x), yc = detail::as_const(y);
  detail::check_single_alignment(m, xc, yc, "alignment_entropy", "alignment", true);
  return host_detail::alignment_entropy(m, xc, yc);
}

/// out[b] = sharp_value(X[b], Y[b]) for every pair of a paired batch (ragged lengths allowed),
/// pairs in parallel.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void sharp_values(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                  std::span<value_of<XB>> out) {
  using T = value_of<XB>;
  detail::check_measure<Cost, Smooth, T>(m);
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_value_batch(X, Y, out);
  parallel_for(X.batch, exec.threads, [&](index_t b, int) {
    out[static_cast<std::size_t>(b)] = host_detail::sharp_value(m, X[b], Y[b]);
  });
}

/// The pairwise (cdist) form: out(a, b) = sharp_value(X[a], Y[b]); out is (|X|, |Y|). A
/// divergence's self terms are computed once per series (per channel for independent channels)
/// and combined as sharp_value combines them (the same bits). Pairs in parallel.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void sharp_pairwise(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                    matrix_view<value_of<XB>> out) {
  using T = value_of<XB>;
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_pairwise_call(m, X, Y, out);
  index_t const terms = host_detail::sharp_self_terms(m, X.channels);
  std::vector<T> self_x, self_y;
  if (m.divergence) {
    self_x.resize(static_cast<std::size_t>(X.batch * terms));
    self_y.resize(static_cast<std::size_t>(Y.batch * terms));
    parallel_for(X.batch + Y.batch, exec.threads, [&](index_t k, int) {
      if (k < X.batch) host_detail::sharp_self_values(m, X[k], self_x.data() + k * terms);
      else host_detail::sharp_self_values(m, Y[k - X.batch], self_y.data() + (k - X.batch) * terms);
    });
  }
  parallel_for(X.batch * Y.batch, exec.threads, [&](index_t k, int) {
    index_t const a = k / Y.batch, b = k % Y.batch;
    out(a, b) = host_detail::sharp_value_given_self(m, X[a], Y[b], m.divergence ? self_x.data() + a * terms : nullptr,
                                                    m.divergence ? self_y.data() + b * terms : nullptr);
  });
}

/// pairwise_grads of the sharp value: GX[a] = sum_b weights(a, b) d sharp(X[a], Y[b]) / dX[a]
/// (weights default to ones) and, when out is given, out(a, b) = sharp(X[a], Y[b]) (the bits of
/// sharp_value and sharp_pairwise). pairwise_grads' rules: GX of X's shape, padding exactly 0,
/// finite weights, the outputs apart from the inputs and each other; deterministic for any thread
/// count. A divergence's self terms are computed once per series (pairwise_grads).
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void sharp_pairwise_grads(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                          batch_view<value_of<XB>> gxs, matrix_view<value_of<XB>> out = {},
                          matrix_view<value_of<XB> const> weights = {}) {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  static_assert(second_order_smoothing<Smooth, T>, "the smoothing has no weights_tangent");
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_pairwise_grads_call(m, gxs, X, Y, out, weights);
  int const workers = resolve_threads(exec.threads, detail::pairwise_grads_tasks(X, Y.batch, 1));
  std::vector<host_detail::tangent_workspace<T>> ws(static_cast<std::size_t>(workers));
  auto const one_pair = [&ws](auto const& one, series_view<T const> x, series_view<T const> y, series_view<T> gx,
                              series_view<T> gy, T seed, int w) {
    return host_detail::sharp_value_and_grad(one, x, y, gx, gy, seed, &ws[static_cast<std::size_t>(w)]);
  };
  using namespace host_detail;
  detail::pairwise_grads_rows(
      exec, m, X, Y, gxs, out, weights, workers, 1,
      [&](auto const& one, index_t count, pair_source<T> pair_at, gradient_source<T> grads_at,
          seed_source<T> seed_at, value_sink<T> store, int w) {
        for (index_t k = 0; k < count; ++k) {  // one pair at a time (no lock-step groups here)
          auto const [x, y] = pair_at(k);
          auto const [gx, gy] = grads_at(k);
          store(k, one_pair(one, x, y, gx, gy, seed_at(k), w));
        }
      },
      one_pair);
}

/// sharp_values() plus the gradients, under values_and_grads' rules: GX[b] = upstream[b]
/// d sharp(X[b], Y[b]) / dX[b] (GY likewise), padding exactly 0, upstream finite (default ones),
/// the outputs apart from the inputs and each other except GX = GY for Y = X.
template <class Cost, class Smooth, batch_like XB, batch_like YB>
  requires std::same_as<value_of<XB>, value_of<YB>>
void sharp_values_and_grads(host_backend exec, measure<Cost, Smooth> const& m, XB xs, YB ys,
                            std::span<value_of<XB>> out, batch_view<value_of<XB>> gxs,
                            batch_view<value_of<XB>> gys,
                            std::span<value_of<XB> const> upstream = {}) {
  using T = value_of<XB>;
  static_assert(differentiable_cost_model<Cost, T>, "the cost model has no step_grad");
  static_assert(second_order_smoothing<Smooth, T>, "the smoothing has no weights_tangent");
  detail::check_measure<Cost, Smooth, T>(m);
  auto const X = detail::as_const(xs);
  auto const Y = detail::as_const(ys);
  detail::check_training_batch(X, Y, out, gxs, gys, upstream);
  std::vector<host_detail::tangent_workspace<T>> ws(static_cast<std::size_t>(resolve_threads(exec.threads, X.batch)));
  parallel_for(X.batch, exec.threads, [&](index_t b, int w) {
    auto const [gx, gy] = detail::zeroed_gradients(gxs, gys, X, Y, b);
    out[static_cast<std::size_t>(b)] = host_detail::sharp_value_and_grad(
        m, X[b], Y[b], gx, gy, detail::seed_of(upstream, b), &ws[static_cast<std::size_t>(w)]);
  });
}

}  // namespace resilin
