#pragma once
// What the commands do with a metric, as one overload set: a resilin::measure goes to the
// alignment and learn APIs; fast_cdtw_metric (metric.hpp) to resilin::fcdtw, warping the first
// argument onto the second one's time axis (M(A_i, B_j) = D(A_i -> B_j): 1-NN warps the test
// series onto each training series; nearest centroid and k-means warp the centroids, as the
// barycentre objective does) and averaging by learn::fcdtw_barycenter.
#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <resilin/alignment.hpp>
#include <resilin/apps/dataset.hpp>
#include <resilin/backend/host.hpp>
#include <resilin/core/error.hpp>
#include <resilin/fcdtw/solver.hpp>
#include <resilin/learn/learn.hpp>
#include <resilin/sharp.hpp>
#include "fcdtw_pairs.hpp"
#include "gpu_support.hpp"
#include "metric.hpp"
#include "options.hpp"
#include "progress.hpp"

namespace resilin_cli {


// What the commands do with a metric, on the host (host_backend overloads) or on the backend
// the command line chose (run_settings overloads, at the end).

// --- out(i, j) = M(A_i, B_j) ------------------------------------------------------------------

template <class Measure, class T>
void pairwise_values(r::host_backend exec, Measure const& m, r::batch_view<T const> a,
                     r::batch_view<T const> b, r::matrix_view<T> out) {
  r::pairwise(exec, m, a, b, out);
}

/// fast-cdtw: A_i warped onto B_j's axis.
template <class T>
void pairwise_values(r::host_backend exec, fast_cdtw_metric const& m, r::batch_view<T const> a,
                     r::batch_view<T const> b, r::matrix_view<T> out) {
  r::fcdtw::pairwise_distances(fit_options_of(m, exec.threads), a, b, out);
}

// --- g[i] = d/dA_i sum_j M(A_i, B_j) ----------------------------------------------------------

template <class Measure, class T>
void pairwise_gradients(r::host_backend exec, Measure const& m, r::batch_view<T const> a,
                        r::batch_view<T const> b, r::batch_view<T> g) {
  r::pairwise_grads(exec, m, a, b, g);
}

/// fast-cdtw: the envelope gradient dD/dA_i at each pair's fitted warp (A_i warped onto B_j),
/// summed over j in order.
template <class T>
void pairwise_gradients(r::host_backend exec, fast_cdtw_metric const& m, r::batch_view<T const> a,
                        r::batch_view<T const> b, r::batch_view<T> g) {
  index_t const pairs = a.batch * b.batch;
  // the pairs expanded a block at a time: the four padded copies (x, y and their gradients) of
  // every pair at once took 413 MB for a 6.6 MB data set
  index_t const block = pair_block(a, b);
  zero_gradients(g);
  for (index_t first = 0; first < pairs; first += block) {
    index_t const last = std::min(pairs, first + block);
    auto xy = expand_pairs(a, b, first, last);
    owned_batch<T> gx = xy.x, gy = xy.y;
    std::vector<T> d(static_cast<std::size_t>(last - first));
    r::fcdtw::distances_and_grads(fit_options_of(m, exec.threads), xy.x.view(), xy.y.view(),
                                  std::span<T>(d), gx.view(), gy.view());
    add_row_gradients(std::as_const(gx).view(), first, b.batch, g);
  }
}

// --- nearest centroid ---------------------------------------------------------------------------

template <class Measure, class T>
r::learn::nearest_centroid_model<T> fit_centroids(Measure const& m, r::dataset<T> const& train,
                                                  r::learn::barycenter_options const& opt) {
  return r::learn::fit_nearest_centroid(m, train, opt);
}

template <class T>
r::learn::nearest_centroid_model<T> fit_centroids(fast_cdtw_metric const& m,
                                                  r::dataset<T> const& train,
                                                  r::learn::barycenter_options const& opt) {
  return r::learn::fit_nearest_centroid_with(
      train, opt, [&](r::batch_view<T const> members, r::learn::barycenter_options const& o) {
        return r::learn::fcdtw_barycenter(fit_options_of(m, o.threads), members, {}, o);
      });
}

// --- k-means --------------------------------------------------------------------------------------

template <class Measure, class T>
r::learn::kmeans_result<T> kmeans_of(Measure const& m, r::dataset<T> const& data,
                                     r::learn::kmeans_options const& ko) {
  return r::learn::kmeans(m, data.view(), ko);
}

template <class T>
r::learn::kmeans_result<T> kmeans_of(fast_cdtw_metric const& m, r::dataset<T> const& data,
                                     r::learn::kmeans_options const& ko) {
  return r::learn::fcdtw_kmeans(fit_options_of(m, ko.barycenter.threads), data.view(), ko);
}

// --- on the backend of the command line (--backend host | cuda) ------------------------------------

/// out(i, j) = M(A_i, B_j), or sharp(A_i, B_j) with --sharp (on the host; resolve() refused
/// --sharp with --backend cuda and for the metrics without a sharp value).
template <class Metric, class T>
void pairwise_values(run_settings const& s, Metric const& m, r::batch_view<T const> a,
                     r::batch_view<T const> b, r::matrix_view<T> out) {
  if constexpr (!std::is_same_v<Metric, fast_cdtw_metric>) {
    if (s.sharp) return r::sharp_pairwise(s.exec, m, a, b, out);
  }
  if (!s.cuda) pairwise_values(s.exec, m, a, b, out);
  else if constexpr (std::is_same_v<Metric, fast_cdtw_metric>) gpu::fcdtw_pairwise(m, a, b, out, s.exec.threads);
  else gpu::pairwise(s.measure, a, b, out);
}

/// g[i] = d/dA_i sum_j M(A_i, B_j), or of the sharp values with --sharp (on the host).
template <class Metric, class T>
void pairwise_gradients(run_settings const& s, Metric const& m, r::batch_view<T const> a,
                        r::batch_view<T const> b, r::batch_view<T> g) {
  if constexpr (!std::is_same_v<Metric, fast_cdtw_metric>) {
    if (s.sharp) return r::sharp_pairwise_grads(s.exec, m, a, b, g);
  }
  if (!s.cuda) pairwise_gradients(s.exec, m, a, b, g);
  else if constexpr (std::is_same_v<Metric, fast_cdtw_metric>) gpu::fcdtw_pairwise_gradients(m, a, b, g, s.exec.threads);
  else gpu::pairwise_gradients(s.measure, a, b, g);
}

/// out(i, j) = M(series_i, centre_j) on the backend of the command line; fast-cdtw:
/// D(centre_j -> series_i), the centroid warped onto the series' axis, as its barycentre and
/// learn::fcdtw_ops warp it.
template <class Metric, class T>
void centroid_distances(run_settings const& s, Metric const& m, r::batch_view<T const> series,
                        r::batch_view<T const> centres, r::matrix_view<T> out) {
  if constexpr (std::is_same_v<Metric, fast_cdtw_metric>) {
    r::learn::detail::centres_warped_onto(series, centres, out, [&](auto c, auto x, r::matrix_view<T> d) {
      pairwise_values(s, m, c, x, d);
    });
  } else {
    pairwise_values(s, m, series, centres, out);
  }
}

/// Pairs per call that keep the backend busy when a row holds only k centroids (short rows of
/// cheap pairs): pairs_per_call()'s on a GPU, a few hundred for the host's threads and SIMD lanes.
inline index_t centroid_pairs_per_call(run_settings const& s) { return s.cuda ? pairs_per_call(s) : 1024; }

/// Nearest-centroid labels of `test` (ties: the first class), the distances on the backend of
/// the command line; the alignment metrics on the host as learn::predict measures (under the
/// model's objective). In row chunks, with progress: each row's label is its own.
template <class Metric, class T>
std::vector<std::string> predict_centroids(run_settings const& s, Metric const& m,
                                           r::learn::nearest_centroid_model<T> const& model,
                                           r::dataset<T> const& test) {
  index_t const k = static_cast<index_t>(model.centroids.size());
  auto const centres = r::learn::detail::stack(std::span(model.centroids));
  std::vector<std::string> labels;
  std::vector<index_t> which;
  std::vector<double> value;
  std::vector<T> d;
  progress p("classify", "test series", test.size());
  for_row_chunks(test.size(), k, p, [&](index_t begin, index_t end) {
    auto const chunk = rows(test.view(), begin, end);
    bool done = false;
    if constexpr (!std::is_same_v<Metric, fast_cdtw_metric>) {
      if (!s.cuda) {
        r::learn::detail::nearest(m, model.objective, chunk, centres.view(), s.exec.threads, which, value);
        done = true;
      }
    }
    if (!done) {
      d.resize(static_cast<std::size_t>((end - begin) * k));
      centroid_distances(s, m, chunk, centres.view(), r::matrix_view<T>{d.data(), end - begin, k});
      r::learn::detail::argmin_rows(d, end - begin, k, which, value);
    }
    for (index_t c : which) labels.push_back(model.classes[static_cast<std::size_t>(c)]);
  }, centroid_pairs_per_call(s));
  return labels;
}

/// A barycentre on the GPU (--backend cuda; require_barycentre_metric admitted the metric):
/// the soft metrics' L-BFGS gradients of all members as one GPU call per iteration,
/// fast-cdtw's warp fits as one call per round.
template <class Metric, class T>
r::learn::barycenter_result<T> gpu_barycenter(run_settings const& s, Metric const& m,
                                              r::batch_view<T const> members,
                                              r::learn::barycenter_options const& o) {
  if constexpr (std::is_same_v<Metric, fast_cdtw_metric>) return gpu::fcdtw_barycenter(m, members, o);
  else return gpu::barycenter(s.measure, members, o);
}

/// One barycentre per class, on the backend of the command line.
template <class Metric, class T>
r::learn::nearest_centroid_model<T> fit_centroids(run_settings const& s, Metric const& m,
                                                  r::dataset<T> const& train,
                                                  r::learn::barycenter_options const& opt) {
  if (!s.cuda) return fit_centroids(m, train, opt);
  return r::learn::fit_nearest_centroid_with(
      train, opt, [&](r::batch_view<T const> members, r::learn::barycenter_options const& o) {
        return gpu_barycenter(s, m, members, o);
      });
}

/// k-means's operations with --backend cuda (kmeans_with): the assignments' pairwise values
/// and the barycentres on the GPU; the series' self values (seeding, empty clusters) as the
/// host's operations compute them.
template <class Metric, class HostOps>
struct gpu_kmeans_ops {
  run_settings const& s;
  Metric const& m;
  HostOps host;

  template <class T = void>
  void validate() const { host.template validate<T>(); }
  template <class T>
  std::vector<double> self(r::batch_view<T const> b, int threads) const {
    return host.self(b, threads);
  }
  template <class T>
  void pairwise(r::batch_view<T const> series, r::batch_view<T const> centres, r::matrix_view<T> out,
                int) const {
    centroid_distances(s, m, series, centres, out);
  }
  template <class T>
  r::learn::barycenter_result<T> barycenter(r::batch_view<T const> members,
                                            r::learn::barycenter_options const& o) const {
    return gpu_barycenter(s, m, members, o);
  }
};

/// k-means on the backend of the command line.
template <class Metric, class T>
r::learn::kmeans_result<T> kmeans_of(run_settings const& s, Metric const& m, r::dataset<T> const& data,
                                     r::learn::kmeans_options const& ko) {
  if (!s.cuda) return kmeans_of(m, data, ko);
  auto const run = [&](auto const& host) {
    using ops = gpu_kmeans_ops<Metric, std::remove_cvref_t<decltype(host)>>;
    return r::learn::detail::kmeans_reporting(ops{s, m, host}, data.view(), ko);
  };
  if constexpr (std::is_same_v<Metric, fast_cdtw_metric>)
    return run(r::learn::fcdtw_ops{fit_options_of(m, ko.barycenter.threads)});
  else
    return run(r::learn::measure_ops<Metric>{m, ko.barycenter.objective});
}

}  // namespace resilin_cli
