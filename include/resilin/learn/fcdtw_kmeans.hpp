#pragma once
// k-means under FastCDTW: kmeans_with() with FastCDTW's operations. The distance of a series x
// to a centroid c (assignments and inertia) is F(phi*; c, x), the centroid warped onto the
// series' axis by a fresh fit from fo.init with fo's budget (fo.steps, fo.lr). The Lloyd update
// (fcdtw_barycenter) lowers the same F, but over warps warm-started across its rounds, which
// reach lower values than a fresh fit: the barycentre's loss lies below the inertia measured
// for the same members (38 % below in a test of six short sine series), and a round need not
// lower the inertia. Like every FastCDTW value, both depend on the budget.
#include <concepts>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>
#include <resilin/core/views.hpp>
#include <resilin/fcdtw/solver.hpp>
#include <resilin/learn/fcdtw_barycenter.hpp>
#include <resilin/learn/kmeans.hpp>

namespace resilin::learn {

namespace detail {
/// out(i, j) = F(phi*; centres_j, series_i), the centres warped onto the series' axes, from
/// warped(centres, series, m) with m(j, i) = D(centres_j -> series_i) ((k, n), any backend).
template <class T, class Warped>
void centres_warped_onto(batch_view<T const> series, batch_view<T const> centres, matrix_view<T> out,
                         Warped&& warped) {
  index_t const n = series.batch, k = centres.batch;
  std::vector<T> m(static_cast<std::size_t>(k * n));
  warped(centres, series, matrix_view<T>{m.data(), k, n});
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < k; ++j) out(i, j) = m[static_cast<std::size_t>(j * n + i)];
}
}  // namespace detail

/// kmeans_with's operations for FastCDTW (see kmeans.hpp's measure_ops).
struct fcdtw_ops {
  fcdtw::fit_options fo;

  /// The options' checks, in T's range where T is given (as measure_ops's).
  template <class T = void>
  void validate() const {
    if constexpr (std::is_void_v<T>) fcdtw::detail::check_options(fo);
    else fcdtw::detail::check_options<T>(fo);
  }
  fcdtw::fit_options on(int threads) const {
    fcdtw::fit_options o = fo;
    o.threads = threads;
    return o;
  }
  template <class T>
  std::vector<double> self(batch_view<T const> b, int threads) const {
    std::vector<T> out(static_cast<std::size_t>(b.batch));
    fcdtw::distances(on(threads), b, b, std::span<T>(out));
    return std::vector<double>(out.begin(), out.end());
  }
  /// out(i, j) = F(phi*; centres_j, series_i).
  template <class T>
  void pairwise(batch_view<T const> series, batch_view<T const> centres, matrix_view<T> out,
                int threads) const {
    detail::centres_warped_onto(series, centres, out, [&](auto c, auto s, matrix_view<T> m) {
      fcdtw::pairwise_distances(on(threads), c, s, m);
    });
  }
  template <class T>
  barycenter_result<T> barycenter(batch_view<T const> members, barycenter_options const& o) const {
    return fcdtw_barycenter(fo, members, {}, o);
  }
};

/// k-means of the series under FastCDTW with fit options fo (fo.threads is ignored:
/// opt.barycenter.threads runs everything); centroids by fcdtw_barycenter. FastCDTW has no sharp
/// value: opt.barycenter.objective must be value.
template <std::floating_point T>
kmeans_result<T> fcdtw_kmeans(fcdtw::fit_options const& fo, batch_view<T const> series,
                              kmeans_options const& opt) {
  detail::require(opt.barycenter.objective == barycenter_objective::value,
                  "fcdtw_kmeans: FastCDTW has no sharp value (objective must be value)");
  return kmeans_with(fcdtw_ops{fo}, series, opt);
}

template <std::floating_point T>
  requires(!std::is_const_v<T>)
kmeans_result<T> fcdtw_kmeans(fcdtw::fit_options const& fo, batch_view<T> series,
                              kmeans_options const& opt) {
  return fcdtw_kmeans(fo, as_const(series), opt);
}

}  // namespace resilin::learn
