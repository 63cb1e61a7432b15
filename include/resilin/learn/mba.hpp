#pragma once
// MBA, Holder & Bagnall's MSM Barycentre Averaging: DBA's scheme with MSM's alignment.
// The exact update used here: align z with every x_k by the optimal MSM path (per channel,
// since MSM's channels are independent); then each z(i, c) becomes the weighted mean of every
// x_k(j, c) with (i, j) on the path of k (moves and split/merge cells alike, each counted
// once, weight w_k). Unlike DBA's mean for squared costs, this is not the exact minimiser of
// MSM along fixed paths (absolute costs and split/merge penalties), so a sweep that would
// raise the loss is rejected and the iteration stops there: the MSM loss never increases.
#include <concepts>
#include <span>
#include <type_traits>
#include <resilin/core/measure.hpp>
#include <resilin/cost/msm.hpp>
#include <resilin/learn/options.hpp>
#include <resilin/learn/path_averaging.hpp>

namespace resilin::learn {

/// The MBA barycentre under MSM (measures::msm, any c and band). Sweeps until the relative
/// loss decrease is <= opt.tolerance, a sweep would raise the loss, or opt.max_iter sweeps.
template <class P, std::floating_point T>
barycenter_result<T> mba(measure<msm_cost<P>, hard_min> const& m, batch_view<T const> series,
                         std::type_identity_t<std::span<T const>> weights = {},
                         barycenter_options const& opt = {}) {
  return detail::path_averaging(m, series, weights, opt, "mba", detail::location_statistic::mean,
                                /*guard=*/true);
}

}  // namespace resilin::learn
