#pragma once
// The engine of the hard-alignment barycentres (DBA for DTW, MBA for MSM): alternate
//   1. align z with every x_k by the measure's optimal path (alignment_path), and
//   2. replace each z(i, c) by a weighted location statistic (mean or median) of the values
//      x_k(j, c) over every path cell (i, j) of every k, each counted with weight w_k.
// A series with independent channels (measures::msm) is aligned channel by channel, so each
// channel of z collects values along its own path. A sweep aligns blocks of consecutive series
// in parallel and merges what they collect in block order: the result does not depend on the
// thread count.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>
#include <resilin/alignment.hpp>
#include <resilin/core/thread_pool.hpp>
#include <resilin/learn/common.hpp>
#include <resilin/learn/options.hpp>

namespace resilin::learn::detail {

/// How the values collected by one barycentre sample become its new value.
enum class location_statistic {
  mean,    // minimises sum w (z - v)^2: the exact update for squared point costs
  median,  // minimises sum w |z - v|: the exact update for absolute point costs
};

/// The weighted mean of the values one barycentre sample collects, as they come: the weighted
/// sum and weight, and whether every value equals the first (equal values average to themselves
/// exactly: the weighted sum was 1 ulp off, and k-means on duplicate series then never settled).
struct mean_accumulator {
  double sum = 0, weight = 0, first = 0;
  bool any = false, equal = true;
  void add(double v, double wt) noexcept {
    if (!any) first = v;
    equal = equal && (!any || v == first);
    any = true;
    sum += wt * v;
    weight += wt;
  }
  /// The values of `o` after this one's.
  void merge(mean_accumulator const& o) noexcept {
    if (!o.any) return;
    if (!any) {
      *this = o;
      return;
    }
    equal = equal && o.equal && o.first == first;
    sum += o.sum;
    weight += o.weight;
  }
  double mean() const noexcept { return equal && any ? first : sum / weight; }
};

/// The weighted (lower) median of (value, weight) pairs; pairs is reordered.
inline double weighted_median(std::vector<std::pair<double, double>>& pairs) {
  std::sort(pairs.begin(), pairs.end());
  double total = 0;
  for (auto const& p : pairs) total += p.second;
  double cumulative = 0;
  for (auto const& [v, wt] : pairs) {
    cumulative += wt;
    if (cumulative >= 0.5 * total) return v;
  }
  return pairs.back().first;
}

/// The median's counterpart of mean_accumulator: every (value, weight) pair, in arrival order.
struct median_collector {
  std::vector<std::pair<double, double>> pairs;
  void add(double v, double wt) { pairs.emplace_back(v, wt); }
  /// The values of `o` after this one's.
  void merge(median_collector const& o) { pairs.insert(pairs.end(), o.pairs.begin(), o.pairs.end()); }
};

/// The most a sweep's per-block collectors keep beside the values they collect.
inline constexpr std::size_t path_sweep_budget_bytes = std::size_t(64) << 20;

/// One alignment sweep: the measure's value of z against every series along the optimal paths,
/// and for each barycentre sample what the update needs of the values x_k(j, c) that the paths
/// pair with it, weights w_k: the mean's accumulator or the median's pairs. The series run in
/// blocks of consecutive series (at most 64, each aligned in order by one task, merged in block
/// order: the result does not depend on the thread count), and no path is kept (75,000 paths
/// of 48 x 48 pairs held 250 MB).
template <class Cost, class T>
struct path_sweep {
  std::vector<mean_accumulator> means;    // mean: (length, channels)
  std::vector<median_collector> medians;  // median: (length, channels)
  std::vector<double> values;             // (n)

  double run(measure<Cost, hard_min> const& m, std::span<T const> z, index_t length,
             batch_view<T const> series, std::span<double const> w, int threads,
             location_statistic stat) {
    values.assign(static_cast<std::size_t>(series.batch), 0.0);
    means.clear();
    medians.clear();
    if (stat == location_statistic::mean) collect(m, z, length, series, w, threads, means);
    else collect(m, z, length, series, w, threads, medians);
    double loss = 0;
    for (index_t k = 0; k < series.batch; ++k) loss += w[static_cast<std::size_t>(k)] * values[static_cast<std::size_t>(k)];
    return loss;
  }

  /// The update: z(i, c) = the statistic run() was given of its sample's collected values
  /// (every row lies on every path). The median reorders its pairs.
  std::vector<T> update() {
    std::vector<T> z(means.size() + medians.size());
    for (std::size_t s = 0; s < means.size(); ++s) z[s] = static_cast<T>(means[s].mean());
    for (std::size_t s = 0; s < medians.size(); ++s) z[s] = static_cast<T>(weighted_median(medians[s].pairs));
    return z;
  }

 private:
  /// run()'s sweep into `merged`, one Collector per sample.
  template <class Collector>
  void collect(measure<Cost, hard_min> const& m, std::span<T const> z, index_t length,
               batch_view<T const> series, std::span<double const> w, int threads,
               std::vector<Collector>& merged) {
    index_t const n = series.batch, channels = series.channels;
    bool const per_channel = m.independent_channels && channels > 1;
    index_t const groups = per_channel ? channels : 1;
    auto const samples = static_cast<std::size_t>(length * channels);
    index_t const blocks = std::clamp<index_t>(
        static_cast<index_t>(path_sweep_budget_bytes / (samples * sizeof(Collector))), 1, std::min<index_t>(n, 64));
    std::vector<std::vector<Collector>> block_collectors(static_cast<std::size_t>(blocks));
    // series k's value, and the values its paths (one per channel group) pair with z's samples
    auto const align = [&](index_t k, std::vector<Collector>& acc) {
      series_view<T const> const x = series[k];
      double const wk = w[static_cast<std::size_t>(k)];
      std::vector<T> zc, xc;
      double total = 0;
      for (index_t g = 0; g < groups; ++g) {
        T v{};
        std::vector<std::array<index_t, 2>> path;
        if (!per_channel) {
          path = alignment_path(m, series_view<T const>{z.data(), length, channels}, x, &v);
        } else {
          zc.resize(static_cast<std::size_t>(length));
          xc.resize(static_cast<std::size_t>(x.length));
          for (index_t i = 0; i < length; ++i) zc[static_cast<std::size_t>(i)] = z[static_cast<std::size_t>(i * channels + g)];
          for (index_t j = 0; j < x.length; ++j) xc[static_cast<std::size_t>(j)] = x(j, g);
          path = alignment_path(m, series_view<T const>{zc.data(), length, 1},
                                series_view<T const>{xc.data(), x.length, 1}, &v);
        }
        total += static_cast<double>(v);
        if (wk == 0) continue;
        index_t const c_begin = per_channel ? g : 0, c_end = per_channel ? g + 1 : channels;
        for (auto const& [i, j] : path)
          for (index_t c = c_begin; c < c_end; ++c)
            acc[static_cast<std::size_t>(i * channels + c)].add(static_cast<double>(x(j, c)), wk);
      }
      values[static_cast<std::size_t>(k)] = total;
    };
    parallel_for(blocks, threads, [&](index_t b, int) {
      auto& acc = block_collectors[static_cast<std::size_t>(b)];
      acc.assign(samples, Collector{});
      for (index_t k = b * n / blocks; k < (b + 1) * n / blocks; ++k) align(k, acc);
    });
    // block 0's collectors become the merged ones, and each later block is freed once merged
    // (the median's pairs are then held about once, not twice)
    merged = std::move(block_collectors[0]);
    for (std::size_t b = 1; b < block_collectors.size(); ++b) {
      for (std::size_t s = 0; s < samples; ++s) merged[s].merge(block_collectors[b][s]);
      std::vector<Collector>().swap(block_collectors[b]);
    }
  }
};

/// The alternating loop. With `guard`, a sweep that raises the loss is rejected and the loop
/// stops (for updates that are not exact minimisers along fixed paths, as MBA's mean for MSM).
/// Stops when the relative decrease is <= opt.tolerance or after opt.max_iter sweeps; reports
/// (stage, sweep, loss) after each accepted sweep.
template <class Cost, class T>
barycenter_result<T> path_averaging(measure<Cost, hard_min> const& m, batch_view<T const> series,
                                    std::span<T const> weights, barycenter_options const& opt,
                                    std::string_view stage, location_statistic stat, bool guard) {
  check_options(opt);
  check_inputs(series, "barycenter");
  auto const w = normalised_weights(weights, series.batch);
  std::span<double const> const ws(w);
  index_t const length = target_length(series, opt);
  std::vector<T> z = initial_barycenter(m, series, ws, length, opt);

  path_sweep<Cost, T> sweep, next;
  double loss = sweep.run(m, z, length, series, ws, opt.threads, stat);
  // as the L-BFGS barycentres: costs that overflow (values near sqrt of the largest finite
  // value) are refused, not averaged to an inf loss
  require(std::isfinite(loss), "barycenter: the loss at the initial barycentre is not finite (",
          loss, "; are the values too large for the measure's costs?)");
  int iterations = 0;
  for (int it = 1; it <= opt.max_iter; ++it) {
    std::vector<T> candidate = sweep.update();
    double const candidate_loss = next.run(m, candidate, length, series, ws, opt.threads, stat);
    if (guard && candidate_loss > loss) break;
    double const decrease = loss - candidate_loss;
    double const scale = std::max(std::abs(loss), std::numeric_limits<double>::min());
    z = std::move(candidate);
    loss = candidate_loss;
    std::swap(sweep, next);
    iterations = it;
    if (opt.progress) opt.progress(stage, it, loss);
    if (decrease <= opt.tolerance * scale) break;
  }
  barycenter_result<T> r;
  r.values = std::move(z);
  r.length = length;
  r.channels = series.channels;
  r.loss = loss;
  r.iterations = iterations;
  return r;
}

}  // namespace resilin::learn::detail
