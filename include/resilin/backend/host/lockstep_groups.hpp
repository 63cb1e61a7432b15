#pragma once
// Which pairs of a batch run in lock-step groups and how a group runs (values and training):
// the planner of batch.hpp over the engines of lockstep.hpp (DTW costs), lockstep_soft_msm.hpp
// (soft-MSM) and lockstep_training.hpp (soft-DTW gradients).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <map>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>
#include <resilin/backend/host/batch_callbacks.hpp>
#include <resilin/backend/host/exp_domain.hpp>
#include <resilin/backend/host/lockstep.hpp>
#include <resilin/backend/host/lockstep_soft_msm.hpp>
#include <resilin/backend/host/lockstep_training.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/band.hpp>
#include <resilin/core/function_ref.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/views.hpp>
#include <resilin/smoothing/soft_min.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Whether a measure's groups also train in lock-step: soft-DTW (lockstep_training.hpp) and
/// soft-MSM (lockstep_soft_msm.hpp).
template <class T, class Cost, class Smooth>
inline constexpr bool lockstep_trains = (lockstep_measure<T, Cost, Smooth> && std::same_as<Smooth, soft_min<T>>) ||
                                        lockstep_soft_msm_measure<T, Cost, Smooth>;

/// Whether a measure's values run in lock-step groups: DTW costs (lockstep.hpp) and soft-MSM
/// (lockstep_soft_msm.hpp).
template <class T, class Cost, class Smooth>
inline constexpr bool lockstep_groups =
    lockstep_measure<T, Cost, Smooth> || lockstep_soft_msm_measure<T, Cost, Smooth>;

/// The most a training group keeps of its table: 12 MiB, soft-DTW's states of every cell
/// (lockstep_training.hpp: n x m up to about 155 x 155 in double and in float), soft-MSM's
/// weights and gradient terms (lockstep_soft_msm.hpp: about 83 x 83 at d = 1, 66 x 66 at
/// d = 2); longer pairs train one at a time. Measured with two threads (2-core Zen 4, 32 MiB L3; soft-DTW, d = 1, per pair
/// against the strips): 128 x 128 (8.5 MB tables) 2.1x faster, 180 x 180 (16.6 MB) 1.24x,
/// 220 x 220 (25 MB) 1.22x slower, and on one thread 256 x 256 (33 MB) 1.12x slower.
inline constexpr std::size_t lockstep_training_table_bytes = std::size_t(12) << 20;

/// How much a ragged training group's cells may exceed its pairs' own (ragged_limits):
/// equal-shape training groups run 1.3-8x faster than their pairs alone. Measured (bm_soft_dtw,
/// bm_soft_msm ragged training, lengths in [n/2, n], one thread, Zen 4): soft-DTW at 1.0 and
/// 0.6 1.4-1.5x faster than at 0.3 (n = 64, double's 128; 1.0 float's 128 too), soft-MSM at
/// 1.0 1.1x faster than at 0.1-0.3 (n = 64); none slower.
inline constexpr double ragged_training_waste = 1.0;

/// The bytes of a training group's table for n x m pairs.
template <class T>
constexpr std::size_t lockstep_table_bytes(index_t n, index_t m) noexcept {
  return static_cast<std::size_t>((n + 1) * (m + 1) * lockstep_vectors<T>) * sizeof(exp_value<T>);
}

/// Pairs planned at a time by batch_values: the plan holds an index per pair (and its grouping
/// another while it is formed), so a whole 20000 x 20000 pairwise matrix planned at once held
/// 16 bytes per pair beside the 8 of its output.
inline constexpr index_t batch_plan_pairs = index_t(1) << 18;

/// Whether pairs of this shape (n x m, d channels) may run in a lock-step group, as far as their
/// shape decides (the planner also asks the pair's values: exp_domain_applies,
/// soft_msm_lockstep_fits): within lockstep_max_length, not a band of one path (single_path.hpp,
/// whose bits value() has), not independent channels (a sum of per-channel recursions: their
/// units, channel_units.hpp, are the pairs then); `training`: a table within
/// lockstep_training_table_bytes, soft-DTW's states or soft-MSM's weights and gradient terms.
template <class T, class Cost, class Smooth>
bool lockstep_shape_fits(measure<Cost, Smooth> const& m, index_t n, index_t c, index_t d, bool training) {
  if constexpr (!lockstep_groups<T, Cost, Smooth>) {
    return false;
  } else {
    if (training && !lockstep_trains<T, Cost, Smooth>) return false;
    std::size_t table = 0;
    if constexpr (lockstep_soft_msm_measure<T, Cost, Smooth>) table = lockstep_soft_msm_table_bytes<T>(n, c, d);
    else table = lockstep_table_bytes<T>(n, c);
    return std::max(n, c) <= lockstep_max_length && !(m.independent_channels && d > 1) &&
           !m.band.geometry(n, c).single_path() && (!training || table <= lockstep_training_table_bytes);
  }
}

/// Where a measure's groups take pairs of different shapes (in a full band: values
/// lockstep_corner_forward, training lockstep_adjoint_sweep too): a group's cells (its
/// longest x times its longest y, every pair computed on them) may exceed its pairs' own by the
/// fraction `waste`, its series be `longest` at most (0: no such groups); its shape must also
/// fit as a pair's would (lockstep_shape_fits: a training group's table). Measured (values, one
/// thread, Zen 4, double; groups of nearly equal shapes against the pairs alone): DTW 2.8-5x
/// faster from 16 to 512 samples, soft-DTW 1.4-2.9x, soft-MSM 2.5x at 16, 1.17x at 64 and none
/// beyond.
struct ragged_limits {
  double waste;
  index_t longest;
};
template <class T, class Cost, class Smooth>
constexpr ragged_limits ragged_limits_of(bool training) noexcept {
  if (training) {
    if constexpr (lockstep_trains<T, Cost, Smooth>) return {ragged_training_waste, lockstep_max_length};
    else return {0, 0};
  }
  if constexpr (lockstep_soft_msm_measure<T, Cost, Smooth>) return {0.1, 64};
  else if constexpr (std::same_as<Smooth, soft_min<T>>) return {0.3, lockstep_max_length};
  else return {1.0, lockstep_max_length};
}

/// A pair that no full group of its shape took: its shape as the groups orient it (rows along
/// the longer series).
struct ragged_pair {
  index_t n, m, pair;
};
/// Rows, then columns, then batch order (group_ragged, group_partial).
inline bool ragged_pair_by_rows(ragged_pair const& a, ragged_pair const& b) noexcept {
  return a.n != b.n ? a.n < b.n : a.m != b.m ? a.m < b.m : a.pair < b.pair;
}

/// Groups of G pairs of different shapes from `pairs`, appended to `grouped`; the others are
/// appended to `rest`. The pairs are sorted by rows, then, in runs of about sqrt(count / G)
/// groups, by columns, so that G consecutive pairs have rows and columns alike; G consecutive
/// pairs form a group where the limits allow it and fits(rows, columns) accepts its shape.
inline void group_ragged(std::vector<ragged_pair>& pairs, std::size_t G, ragged_limits limits,
                         function_ref<bool(index_t, index_t)> fits, std::vector<index_t>& grouped,
                         std::vector<index_t>& rest) {
  if (pairs.size() < G) {
    for (ragged_pair const& p : pairs) rest.push_back(p.pair);
    return;
  }
  auto const by_columns = [](ragged_pair const& a, ragged_pair const& b) {
    return a.m != b.m ? a.m < b.m : a.n != b.n ? a.n < b.n : a.pair < b.pair;
  };
  std::sort(pairs.begin(), pairs.end(), ragged_pair_by_rows);
  auto const run = G * static_cast<std::size_t>(std::max(1.0, std::round(std::sqrt(double(pairs.size()) / double(G)))));
  for (std::size_t r = 0; r < pairs.size(); r += run)
    std::sort(pairs.begin() + static_cast<std::ptrdiff_t>(r),
              pairs.begin() + static_cast<std::ptrdiff_t>(std::min(pairs.size(), r + run)), by_columns);
  std::size_t p = 0;
  while (p + G <= pairs.size()) {
    double own = 0;
    index_t n = 0, m = 0;
    for (std::size_t g = p; g < p + G; ++g) {
      own += static_cast<double>(pairs[g].n) * static_cast<double>(pairs[g].m);
      n = std::max(n, pairs[g].n);
      m = std::max(m, pairs[g].m);
    }
    if (n <= limits.longest && fits(n, m) &&
        static_cast<double>(G) * static_cast<double>(n) * static_cast<double>(m) <= (1 + limits.waste) * own) {
      for (std::size_t g = p; g < p + G; ++g) grouped.push_back(pairs[g].pair);
      p += G;
    } else {
      rest.push_back(pairs[p++].pair);
    }
  }
  for (; p < pairs.size(); ++p) rest.push_back(pairs[p].pair);
}

/// Groups of fewer than G pairs from the pairs no full group took (`pairs`: their shapes as
/// group_ragged's, or as given where `ragged` is false, when only equal shapes may share a
/// group), appended to `grouped` with -1 for each idle lane (run_lockstep_group repeats the
/// group's first pair there and drops its results); the others go to `rest`. A group of k >= 2
/// pairs, of one shape unless ragged, is formed where a full group of the same cells would be:
/// G N M <= (1 + waste) own (N x M the group's extent, own its pairs' cells). Training, waste
/// 1.0: half a group of equal pairs (k-means' clusters of 50 series left 18 of 32 pairs to run
/// alone, at 2.7-5 times a grouped pair's cost).
inline void group_partial(std::vector<ragged_pair>& pairs, std::size_t G, ragged_limits limits, bool ragged,
                          function_ref<bool(index_t, index_t)> fits, std::vector<index_t>& grouped,
                          std::vector<index_t>& rest) {
  std::sort(pairs.begin(), pairs.end(), ragged_pair_by_rows);
  std::size_t p = 0;
  while (p < pairs.size()) {
    std::size_t q = p;
    double own = 0;
    index_t n = 0, m = 0;
    while (q < pairs.size() && q - p < G && (ragged || (pairs[q].n == pairs[p].n && pairs[q].m == pairs[p].m))) {
      own += static_cast<double>(pairs[q].n) * static_cast<double>(pairs[q].m);
      n = std::max(n, pairs[q].n);
      m = std::max(m, pairs[q].m);
      ++q;
    }
    if (q - p >= 2 && (!ragged || n <= limits.longest) && fits(n, m) &&
        static_cast<double>(G) * static_cast<double>(n) * static_cast<double>(m) <= (1 + limits.waste) * own) {
      for (std::size_t g = p; g < q; ++g) grouped.push_back(pairs[g].pair);
      grouped.insert(grouped.end(), G - (q - p), index_t(-1));
      p = q;
    } else {
      rest.push_back(pairs[p++].pair);
    }
  }
}

/// Which pairs of a batch run in lock-step: groups of G pairs of one shape, in batch order,
/// then, in a full band, groups of pairs of alike shapes (group_ragged, ragged_limits_of), then
/// groups with idle lanes of what is left (group_partial), and the rest, one task each. Both
/// traversals give the same bits, so the plan may depend on the thread count: with fewer
/// groups than threads, none is formed (one group on one core would be slower than its pairs
/// spread over all of them). `training`: groups for values and
/// gradients (lockstep_trains, and tables within lockstep_training_table_bytes).
struct lockstep_plan {
  std::vector<index_t> grouped;  // lockstep_pairs<T> pair indices per group (-1: an idle lane)
  std::vector<index_t> rest;
};

/// pair_at(k) gives the (x, y) views of pair k of count; threads: the workers that will run it.
/// (A template on pair_at: run_planned's offset into its pair_source, inlined.)
template <class T, class Cost, class Smooth, class PairAt>
lockstep_plan plan_lockstep(measure<Cost, Smooth> const& m, index_t count, PairAt&& pair_at,
                            int threads = 1, bool training = false) {
  lockstep_plan plan;
  bool applies = false;
  if constexpr (lockstep_groups<T, Cost, Smooth>)
    applies = !m.divergence && count >= 2 && (!training || lockstep_trains<T, Cost, Smooth>);
  if (!applies) {
    plan.rest.resize(static_cast<std::size_t>(count));
    for (index_t k = 0; k < count; ++k) plan.rest[static_cast<std::size_t>(k)] = k;
    return plan;
  }
  if constexpr (lockstep_groups<T, Cost, Smooth>) {
    index_t const channels = pair_at(0).first.channels;  // a batch's pairs share them
    std::map<std::pair<index_t, index_t>, std::vector<index_t>> by_shape;
    for (index_t k = 0; k < count; ++k) {
      auto const [x, y] = pair_at(k);
      bool fits = lockstep_shape_fits<T>(m, x.length, y.length, x.channels, training);
      if constexpr (lockstep_soft_msm_measure<T, Cost, Smooth>)  // S(x, x) trains alone (its diagonal's partials)
        fits = fits && soft_msm_lockstep_fits(m.cost, x, y) && !(training && x.data == y.data);
      else if constexpr (std::same_as<Smooth, soft_min<T>>)
        fits = fits && exp_domain_applies<T, typename Cost::distance_type>(x, y, m.smooth.gamma,
                                                                         m.band.geometry(x.length, y.length));
      if (fits)
        by_shape[{x.length, y.length}].push_back(k);
      else
        plan.rest.push_back(k);
    }
    auto const G = static_cast<std::size_t>(lockstep_pairs<T>);
    ragged_limits const limits = ragged_limits_of<T, Cost, Smooth>(training);
    bool const ragged = limits.longest > 0 && m.band.type() == band_spec::kind::none;
    std::vector<index_t> grouped, leftover;
    std::vector<ragged_pair> unequal;
    for (auto const& [shape, members] : by_shape) {
      std::size_t const full = members.size() / G * G;
      grouped.insert(grouped.end(), members.begin(), members.begin() + full);
      auto const [n, c] = shape;
      for (std::size_t k = full; k < members.size(); ++k)
        if (ragged) unequal.push_back({std::max(n, c), std::min(n, c), members[k]});
        else leftover.push_back(members[k]);
    }
    auto const fits = [&](index_t n, index_t c) { return lockstep_shape_fits<T>(m, n, c, channels, training); };
    group_ragged(unequal, G, limits, fits, grouped, leftover);
    // then groups with idle lanes, of what is left
    std::vector<ragged_pair> left;
    for (index_t k : leftover) {
      auto const [x, y] = pair_at(k);
      left.push_back(ragged ? ragged_pair{std::max(x.length, y.length), std::min(x.length, y.length), k}
                            : ragged_pair{x.length, y.length, k});
    }
    leftover.clear();
    group_partial(left, G, limits, ragged, fits, grouped, leftover);
    // a group for every worker that runs at once: threads beyond the cores share them (20000
    // threads for 300 series of 16 took every pair out of the groups: 1.22 s against 0.05 s)
    // (hardware_concurrency reads /sys: not for one-thread plans, which pairwise_grads makes per row)
    unsigned const cores = threads > 1 ? std::thread::hardware_concurrency() : 1u;
    int const busy = std::max(1, cores > 0 ? std::min(threads, static_cast<int>(cores)) : threads);
    if (grouped.size() / G >= static_cast<std::size_t>(busy)) {
      plan.grouped.insert(plan.grouped.end(), grouped.begin(), grouped.end());
      plan.rest.insert(plan.rest.end(), leftover.begin(), leftover.end());
    } else {
      std::copy_if(grouped.begin(), grouped.end(), std::back_inserter(plan.rest), [](index_t k) { return k >= 0; });
      plan.rest.insert(plan.rest.end(), leftover.begin(), leftover.end());
    }
  }
  return plan;
}

/// Runs one group (members: its lockstep_pairs<T> pair indices, from a plan): store(k, S(x_k,
/// y_k)) for its pairs; a soft value that the exponential domain leaves inaccurate
/// (exp_domain_accurate) comes from single(k) instead, the single-pair value (which runs such a
/// pair again in the log domain).
template <class T, class Cost, class Smooth, class Single>
void run_lockstep_group(measure<Cost, Smooth> const& m, index_t const* members, pair_source<T> pair_at,
                        value_sink<T> store, Single&& single, lockstep_workspace<T>& ws) {
  if constexpr (lockstep_groups<T, Cost, Smooth>) {
    constexpr int G = lockstep_pairs<T>;
    oriented_pair<T> pairs[G];
    for (int g = 0; g < G; ++g) {
      auto const [x, y] = pair_at(members[g] >= 0 ? members[g] : members[0]);  // an idle lane: the first pair again
      pairs[g] = oriented_pair<T>::of(x, y);
    }
    auto const [n, c] = group_extent::of(pairs, G);  // a ragged group's: a full band
    band_geometry const band = m.band.geometry(n, c);
    T values[G];
    if constexpr (lockstep_soft_msm_measure<T, Cost, Smooth>) {  // the log domain: every value kept
      lockstep_soft_msm_values(pairs, band, m.cost, m.smooth, values, ws);
    } else {
      typename lockstep_cell_for<T, Cost, Smooth>::type const cell(m.smooth);
      lockstep_values<T, typename Cost::distance_type>(pairs, band, cell, values, ws);
      if constexpr (std::same_as<Smooth, soft_min<T>>)
        for (int g = 0; g < G; ++g)
          if (members[g] >= 0 && !exp_domain_accurate(values[g], m.smooth.gamma, pairs[g].x.length, pairs[g].y.length))
            values[g] = single(members[g]);
    }
    for (int g = 0; g < G; ++g)
      if (members[g] >= 0) store(members[g], values[g]);
  }
}

/// Trains one group (members as run_lockstep_group's, from a training plan): for each pair k,
/// store(k, S) with seed_at(k) dS/dx_k and dS/dy_k added to the views grads_at(k) gives (zeroed;
/// called once per pair); a pair that a soft-DTW group leaves untrained (its value inaccurate in
/// the exponential domain) is trained by single(k, x, y, gx, gy, seed) instead.
template <class T, class Cost, class Smooth, class Single>
void run_lockstep_training_group(measure<Cost, Smooth> const& m, index_t const* members, pair_source<T> pair_at,
                                 gradient_source<T> grads_at, seed_source<T> seed_at, value_sink<T> store,
                                 Single&& single, lockstep_workspace<T>& ws) {
  if constexpr (lockstep_trains<T, Cost, Smooth>) {
    constexpr int G = lockstep_pairs<T>;
    oriented_training_pair<T> pairs[G];
    auto const [x0, y0] = pair_at(members[0]);
    index_t const idle_size = (x0.length + y0.length) * x0.channels;  // an idle lane's gradients
    ws.idle_gradients.assign(static_cast<std::size_t>(std::count(members, members + G, index_t(-1)) * idle_size), T(0));
    T* idle = ws.idle_gradients.data();
    for (int g = 0; g < G; ++g) {
      if (members[g] < 0) {  // an idle lane: the first pair again, its gradients into scratch
        series_view<T> const gx{idle, x0.length, x0.channels}, gy{idle + x0.length * x0.channels, y0.length, y0.channels};
        idle += idle_size;
        pairs[g] = oriented_training_pair<T>::of(x0, y0, gx, gy, seed_at(members[0]));
        continue;
      }
      auto const [x, y] = pair_at(members[g]);
      auto const [gx, gy] = grads_at(members[g]);
      pairs[g] = oriented_training_pair<T>::of(x, y, gx, gy, seed_at(members[g]));
    }
    T values[G];
    bool trained[G];
    auto const [n, c] = group_extent::of(pairs, G);  // a ragged group's: a full band
    band_geometry const band = m.band.geometry(n, c);
    if constexpr (lockstep_soft_msm_measure<T, Cost, Smooth>) {  // the log domain: every pair trained
      lockstep_soft_msm_values_and_grads(pairs, band, m.cost, m.smooth, values, ws);
      std::fill(trained, trained + G, true);
    } else {
      lockstep_soft_cell<T> const cell(m.smooth);
      lockstep_values_and_grads<T, typename Cost::distance_type>(pairs, band, cell, values, trained, ws);
    }
    for (int g = 0; g < G; ++g) {
      if (members[g] < 0) continue;
      oriented_training_pair<T> const& p = pairs[g];
      store(members[g], trained[g] ? values[g] : single(p.x, p.y, p.gx, p.gy, p.seed));
    }
  }
}

}  // namespace resilin::host_detail
