#pragma once
// The one place where a metric name becomes a measure type. Every subcommand goes through
// visit_metric(), which calls a generic callable with the concrete resilin::measure, or with
// fast_cdtw_metric for fast-cdtw (no resilin::measure: metric_ops.hpp says what each command
// does with it).
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <limits>
#include <string>
#include <string_view>
#include <resilin/alignment.hpp>
#include <resilin/apps/dataset.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/measure.hpp>

namespace resilin_cli {
namespace r = resilin;
using r::index_t;

enum class metric_kind {
  euclidean, dtw, soft_dtw, soft_dtw_div, msm, soft_msm, soft_msm_div, cdtw, soft_cdtw, soft_cdtw_div,
  fast_cdtw
};

inline constexpr std::array<std::string_view, 11> metric_names{
    "euclidean", "dtw", "soft-dtw", "soft-dtw-div", "msm",
    "soft-msm", "soft-msm-div", "cdtw", "soft-cdtw", "soft-cdtw-div", "fast-cdtw"};

inline metric_kind parse_metric(std::string_view name) {
  for (std::size_t k = 0; k < metric_names.size(); ++k)
    if (name == metric_names[k]) return static_cast<metric_kind>(k);
  std::string known;
  for (auto n : metric_names) known += (known.empty() ? "" : ", ") + std::string(n);
  RESILIN_THROW(r::invalid_argument(r::detail::message("unknown metric '", name,
                                                       "' (expected one of: ", known, ")")));
}

inline bool is_soft(metric_kind m) noexcept {
  return m == metric_kind::soft_dtw || m == metric_kind::soft_dtw_div ||
         m == metric_kind::soft_msm || m == metric_kind::soft_msm_div ||
         m == metric_kind::soft_cdtw || m == metric_kind::soft_cdtw_div;
}

inline bool is_divergence(metric_kind m) noexcept {
  return m == metric_kind::soft_dtw_div || m == metric_kind::soft_msm_div || m == metric_kind::soft_cdtw_div;
}

inline bool is_msm(metric_kind m) noexcept {
  return m == metric_kind::msm || m == metric_kind::soft_msm || m == metric_kind::soft_msm_div;
}

/// A resolved metric: kind, temperature (soft metrics) and band.
struct measure_choice {
  metric_kind metric = metric_kind::dtw;
  double gamma = 1.0;
  double c = 1.0;  // MSM split/merge cost
  r::band_spec band{};
  index_t steps = 300;     // fast-cdtw: Adam steps per warp fit
  double lr = 0.01;        // fast-cdtw: Adam learning rate
  bool grid_init = false;  // fast-cdtw: fits start at the grid CDTW alignment (--init grid)
};

/// fast-cdtw (spec/cdtw.md part B): a piecewise-linear warp fitted per pair by `steps` Adam
/// steps at rate `lr` on the closed-form arc-length objective, then D = the objective there.
/// Asymmetric: M(a, b) warps a onto b's time axis (1-NN: M(test, train), the test series
/// warped; centroids and k-means: the centroid warped, as the barycentre objective has it).
/// D depends on (steps, lr, init): values under different budgets are not comparable. Not a
/// resilin::measure, so visit_measure() does not hand it out.
struct fast_cdtw_metric {
  index_t steps = 300;
  double lr = 0.01;
  bool grid_init = false;
};

/// Calls f(measure) with the resilin measure for `c` in precision T.
///   euclidean     sum_t (x_t - y_t)^2: DTW confined to the diagonal (band radius 0), equal
///                 lengths only. Squared, like the UCR DTW cost, so that `euclidean` and
///                 `dtw --band 0` print the same numbers; 1-NN only needs the ordering.
///   dtw           exact DTW, squared point cost, sum along the best path (UCR convention)
///   soft-dtw      soft-DTW with temperature gamma (Cuturi & Blondel 2017)
///   soft-dtw-div  S(x,y) - S(x,x)/2 - S(y,y)/2 (Blondel, Mensch & Vert 2021)
///   msm           Move-Split-Merge (Stefan, Athitsos & Das 2013), absolute costs, cost c
///   soft-msm      Soft-MSM (Holder & Bagnall): gated squared surrogate, temperature gamma
///   soft-msm-div  its divergence; several channels are aligned independently and summed
///   cdtw          grid continuous DTW (spec/cdtw.md §A): the least arc-length integral of
///                 |x(u) - y(v)|^2 between the linear interpolants over lattice paths in [0,1]^2
///   soft-cdtw     its soft-min over lattice paths, temperature gamma
///   soft-cdtw-div S(x,y) - S(x,x)/2 - S(y,y)/2 of soft-cdtw; channels aligned jointly
///   fast-cdtw     is no measure: visit_metric() hands out fast_cdtw_metric instead
template <std::floating_point T, class F>
void visit_measure(measure_choice const& c, F&& f) {
  switch (c.metric) {
    case metric_kind::euclidean: f(r::measures::dtw(r::band_spec::radius(0))); return;
    case metric_kind::dtw: f(r::measures::dtw(c.band)); return;
    case metric_kind::soft_dtw: f(r::measures::soft_dtw<T>(static_cast<T>(c.gamma), c.band)); return;
    case metric_kind::soft_dtw_div:
      f(r::measures::soft_dtw_divergence<T>(static_cast<T>(c.gamma), c.band));
      return;
    case metric_kind::msm: f(r::measures::msm(c.c, c.band)); return;
    case metric_kind::soft_msm:
      f(r::measures::soft_msm<T>(static_cast<T>(c.gamma), static_cast<T>(c.c), c.band));
      return;
    case metric_kind::soft_msm_div:
      f(r::measures::soft_msm_divergence<T>(static_cast<T>(c.gamma), static_cast<T>(c.c), c.band));
      return;
    case metric_kind::cdtw: f(r::measures::cdtw(c.band)); return;
    case metric_kind::soft_cdtw: f(r::measures::soft_cdtw<T>(static_cast<T>(c.gamma), c.band)); return;
    case metric_kind::soft_cdtw_div:
      f(r::measures::soft_cdtw_divergence<T>(static_cast<T>(c.gamma), c.band));
      return;
    case metric_kind::fast_cdtw:
      RESILIN_THROW(r::invalid_argument(
          "metric 'fast-cdtw' is not an alignment measure (it fits a warp per pair); this "
          "path takes the alignment measures only"));
  }
}

/// Calls f(metric) with the resilin measure of `c` (visit_measure), or with fast_cdtw_metric.
template <std::floating_point T, class F>
void visit_metric(measure_choice const& c, F&& f) {
  if (c.metric == metric_kind::fast_cdtw) f(fast_cdtw_metric{c.steps, c.lr, c.grid_init});
  else visit_measure<T>(c, f);
}

/// The most samples (n + m) of one recursion the metric runs between a series of a and one of
/// b: a divergence also aligns each series with itself (1000 against 10 samples: 2000, not 1010).
template <class T>
double longest_problem(metric_kind metric, r::dataset<T> const& a, r::dataset<T> const& b) {
  auto const na = static_cast<double>(a.max_length), nb = static_cast<double>(b.max_length);
  return is_divergence(metric) ? std::max({na + nb, 2 * na, 2 * nb}) : na + nb;
}

/// The path cost bound of check_inputs and check_option_ranges: a path sums at most n + m step
/// costs of `channels` terms each, |a - b| (msm: plus c) or its square, x2 since CDTW weights a
/// step by its arc length (up to sqrt(2) grid spacings). Beyond the largest finite value every
/// distance is inf and every gradient 0, which is refused rather than printed (values near
/// 1e154 in double, 1e19 in float).
template <class T>
bool path_costs_finite(metric_kind metric, double largest, double c, r::dataset<T> const& a,
                       r::dataset<T> const& b) {
  double const gap = 2 * largest + (is_msm(metric) ? c : 0.0);
  double const step = metric == metric_kind::msm ? gap : gap * gap;
  double const paths = 2.0 * longest_problem(metric, a, b) * static_cast<double>(a.channels);
  return step * paths < static_cast<double>(std::numeric_limits<T>::max());
}

template <class T>
double largest_magnitude(r::dataset<T> const& a, r::dataset<T> const& b) {
  double largest = 0;
  for (auto const* d : {&a, &b})
    for (T v : d->values) largest = std::max(largest, std::abs(static_cast<double>(v)));
  return largest;
}

/// The options' ranges for these series (options.hpp's check_run reports them as usage
/// errors): a --c that makes the msm path costs overflow where the data alone do not, a
/// --gamma whose soft values overflow.
/// largest: largest_magnitude(a, b).
template <class T>
void check_option_ranges(measure_choice const& c, r::dataset<T> const& a, r::dataset<T> const& b,
                         double largest) {
  r::detail::require(path_costs_finite(c.metric, largest, c.c, a, b), "--c ", c.c,
                     " is too large for these series (values up to ", largest, "): the path costs of metric '",
                     metric_names[static_cast<std::size_t>(c.metric)], "' overflow ", sizeof(T) == 4 ? "float" : "double");
  // A soft value reaches -gamma (n + m) ln 3 (every path's weight counted): beyond the largest
  // finite value, S is -inf and the divergence -inf + inf = NaN, the sharp value inf. A
  // divergence's self terms S(x, x) and S(y, y) count 2n and 2m samples.
  if (is_soft(c.metric)) {
    double const samples = longest_problem(c.metric, a, b);
    r::detail::require(c.gamma * std::log(3.0) * samples < static_cast<double>(std::numeric_limits<T>::max()),
                       "--gamma ", c.gamma, " is too large for series of ", a.max_length, " and ",
                       b.max_length, " samples", is_divergence(c.metric) ? " (a divergence aligns each series with itself too)" : "",
                       ": the soft values overflow ", sizeof(T) == 4 ? "float" : "double");
  }
}

/// Input checks with the files' names (the library's own messages name its arguments): the
/// channels agree; no path cost can overflow through the data (with c = 0; a --c that does is
/// check_option_ranges'); fast-cdtw's series have 2 samples or more; euclidean compares equal
/// lengths. largest: largest_magnitude(a, b).
template <class T>
void check_inputs(measure_choice const& c, r::dataset<T> const& a, std::string_view a_name,
                  r::dataset<T> const& b, std::string_view b_name, double largest) {
  r::detail::require(a.channels == b.channels, "channel mismatch: ", a_name, " has ", a.channels,
                     " channels, ", b_name, " has ", b.channels);
  r::detail::require(path_costs_finite(c.metric, largest, 0.0, a, b), a_name, " and ", b_name,
                     " hold values up to ", largest, ": the path costs of metric '",
                     metric_names[static_cast<std::size_t>(c.metric)], "' overflow ", sizeof(T) == 4 ? "float" : "double",
                     " (use --znorm, or rescale the data)");
  if (c.metric == metric_kind::fast_cdtw)
    for (auto const* d : {&a, &b})
      for (std::size_t s = 0; s < d->lengths.size(); ++s)
        r::detail::require(d->lengths[s] >= 2, "metric 'fast-cdtw' needs series of 2 samples or more: ",
                           d == &a ? a_name : b_name, " series ", s + 1, " has 1");
  if (c.metric != metric_kind::euclidean) return;
  index_t const n = a.lengths.at(0);
  auto const check = [&](r::dataset<T> const& d, std::string_view name) {
    for (std::size_t s = 0; s < d.lengths.size(); ++s)
      r::detail::require(d.lengths[s] == n, "metric 'euclidean' needs series of equal length: ",
                         a_name, " series 1 has ", n, " values, ", name, " series ", s + 1,
                         " has ", d.lengths[s], " (use dtw for unequal lengths)");
  };
  check(a, a_name);
  check(b, b_name);
}

}  // namespace resilin_cli
