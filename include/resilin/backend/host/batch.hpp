#pragma once
// Values (and gradients) of many pairs on the host: the pairs that fit go in lock-step groups
// (lockstep_groups.hpp), the others one at a time (pair.hpp), on one parallel_for per plan
// chunk (independent channels: chunks of channel units, channel_units.hpp, with a parallel_for
// each for the whole pairs, the units and the fold). Both traversals give the same bits, so
// results never depend on which one ran a pair, nor on the thread count.
#include <algorithm>
#include <vector>
#include <resilin/backend/host/batch_callbacks.hpp>
#include <resilin/backend/host/channel_units.hpp>
#include <resilin/backend/host/lockstep_groups.hpp>
#include <resilin/backend/host/pair.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/thread_pool.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// The pairs [0, count) planned batch_plan_pairs at a time (plan_lockstep, with `training`;
/// pair_at(k) gives (x_k, y_k)), each chunk on one parallel_for of up to `threads` threads with
/// one workspace each (ws.size() >= the threads parallel_for uses): group(members, ws) for each
/// group (lockstep_pairs<T> pair indices), single(k, ws) for each other pair.
template <class T, class Cost, class Smooth, class Group, class Single>
void run_planned(measure<Cost, Smooth> const& m, index_t count, int threads, bool training, pair_source<T> pair_at,
                 Group&& group, Single&& single, std::vector<workspace<T>>& ws) {
  constexpr int G = lockstep_pairs<T>;
  for (index_t first = 0; first < count; first += batch_plan_pairs) {
    index_t const chunk = std::min(batch_plan_pairs, count - first);
    auto const chunk_pair = [&](index_t k) { return pair_at(first + k); };
    lockstep_plan const plan = plan_lockstep<T>(m, chunk, chunk_pair, resolve_threads(threads, chunk), training);
    index_t const groups = static_cast<index_t>(plan.grouped.size()) / G;
    index_t const tasks = groups + static_cast<index_t>(plan.rest.size());
    parallel_for(tasks, threads, [&](index_t task, int w) {
      auto& wsw = ws[static_cast<std::size_t>(w)];
      if (task < groups) {
        index_t members[G];
        for (int g = 0; g < G; ++g) {  // -1: an idle lane (group_partial)
          index_t const k = plan.grouped[static_cast<std::size_t>(task * G + g)];
          members[g] = k >= 0 ? first + k : k;
        }
        group(members, wsw);
      } else {
        single(first + plan.rest[static_cast<std::size_t>(task - groups)], wsw);
      }
    });
  }
}

/// batch_values' and batch_values_and_grads' pairs as they are (no channel units), through
/// run_planned.
template <class T, class Cost, class Smooth>
void planned_values(measure<Cost, Smooth> const& m, index_t count, int threads, pair_source<T> pair_at,
                    value_sink<T> store, std::vector<workspace<T>>& ws) {
  auto const one = [&](index_t k, workspace<T>& w) {
    auto const [x, y] = pair_at(k);
    return value(m, x, y, w);
  };
  run_planned<T>(
      m, count, threads, false, pair_at,
      [&](index_t const* members, workspace<T>& w) {
        run_lockstep_group<T>(m, members, pair_at, store, [&](index_t k) { return one(k, w); }, w.lockstep);
      },
      [&](index_t k, workspace<T>& w) { store(k, one(k, w)); }, ws);
}

template <class T, class Cost, class Smooth>
void planned_values_and_grads(measure<Cost, Smooth> const& m, index_t count, int threads, pair_source<T> pair_at,
                              gradient_source<T> grads_at, seed_source<T> seed_at, value_sink<T> store,
                              std::vector<workspace<T>>& ws) {
  run_planned<T>(
      m, count, threads, true, pair_at,
      [&](index_t const* members, workspace<T>& w) {
        run_lockstep_training_group<T>(
            m, members, pair_at, grads_at, seed_at, store,
            [&](auto x, auto y, auto gx, auto gy, T seed) { return value_and_grad(m, x, y, gx, gy, seed, w); },
            w.lockstep);
      },
      [&](index_t k, workspace<T>& w) {
        auto const [x, y] = pair_at(k);
        auto const [gx, gy] = grads_at(k);
        store(k, value_and_grad(m, x, y, gx, gy, seed_at(k), w));
      },
      ws);
}

/// Whether a batch of measure m may have pairs that run as channel units (channel_units.hpp).
template <class T, class Cost, class Smooth>
bool may_split_channels(measure<Cost, Smooth> const& m) noexcept {
  return lockstep_groups<T, Cost, Smooth> && m.independent_channels && !m.divergence;
}

/// An independent-channels batch chunk by chunk (channel_units::gather): whole(units) runs the
/// pairs that run as they are, split(units, one) the units with the one-channel measure, and
/// fold(units, s) the chunk's split pair s (on any worker).
template <class T, class Cost, class Smooth, class Whole, class Split, class Fold>
void run_channel_units(measure<Cost, Smooth> const& m, index_t count, int threads, bool training, pair_source<T> pair_at,
                       Whole&& whole, Split&& split, Fold&& fold, std::vector<workspace<T>>& ws) {
  auto const one = m.single_channel();
  auto const splits = [&](series_view<T const> x, series_view<T const> y) {
    return runs_channel_units<T>(m, x, y, training);
  };
  channel_units<T> units;
  for (index_t first = 0; first < count;) {
    index_t const next = units.gather(first, count, pair_at, splits, training);
    whole(units);
    // a workspace per thread that the units use, more than the batch's pairs may have had
    auto const workers = static_cast<std::size_t>(resolve_threads(threads, units.units()));
    if (ws.size() < workers) ws.resize(workers);
    split(units, one);
    // the fold touches each copied sample about once: below about 30 us of it, starting threads
    // would cost more
    int const fold_threads = units.samples() >= channel_units<T>::parallel_fold_samples ? threads : 1;
    parallel_for(units.split_pairs(), fold_threads, [&](index_t s, int) { fold(units, s); });
    first = next;
  }
}

/// store(k, value(m, x_k, y_k)) for k in [0, count), where pair_at(k) gives (x_k, y_k); threads
/// and ws as run_planned's. Independent channels of short pairs run as channel units.
template <class T, class Cost, class Smooth>
void batch_values(measure<Cost, Smooth> const& m, index_t count, int threads, pair_source<T> pair_at,
                  value_sink<T> store, std::vector<workspace<T>>& ws) {
  if (!may_split_channels<T>(m)) return planned_values<T>(m, count, threads, pair_at, store, ws);
  run_channel_units<T>(
      m, count, threads, false, pair_at,
      [&](channel_units<T> const& units) {
        std::vector<index_t> const& whole = units.whole();
        planned_values<T>(
            m, static_cast<index_t>(whole.size()), threads,
            [&](index_t k) { return pair_at(whole[static_cast<std::size_t>(k)]); },
            [&](index_t k, T v) { store(whole[static_cast<std::size_t>(k)], v); }, ws);
      },
      [&](channel_units<T>& units, auto const& one) {
        planned_values<T>(
            one, units.units(), threads, [&](index_t u) { return units.series(u); },
            [&](index_t u, T v) { units.value(u) = v; }, ws);
      },
      [&](channel_units<T> const& units, index_t s) { store(units.split_pair(s), units.split_value(s)); }, ws);
}

/// store(k, value_and_grad(m, x_k, y_k, gx_k, gy_k, seed_k)) for k in [0, count), where
/// pair_at(k) gives (x_k, y_k), grads_at(k) the gradient views (zeroed; called once per pair)
/// and seed_at(k) the seed; threads and ws as run_planned's. Soft-DTW and soft-MSM pairs that
/// fit train in lock-step groups (run_lockstep_training_group), and independent channels of
/// short pairs as channel units.
template <class T, class Cost, class Smooth>
void batch_values_and_grads(measure<Cost, Smooth> const& m, index_t count, int threads, pair_source<T> pair_at,
                            gradient_source<T> grads_at, seed_source<T> seed_at, value_sink<T> store,
                            std::vector<workspace<T>>& ws) {
  if (!may_split_channels<T>(m))
    return planned_values_and_grads<T>(m, count, threads, pair_at, grads_at, seed_at, store, ws);
  run_channel_units<T>(
      m, count, threads, true, pair_at,
      [&](channel_units<T> const& units) {
        std::vector<index_t> const& whole = units.whole();
        auto const at = [&](index_t k) { return whole[static_cast<std::size_t>(k)]; };
        planned_values_and_grads<T>(
            m, static_cast<index_t>(whole.size()), threads, [&](index_t k) { return pair_at(at(k)); },
            [&](index_t k) { return grads_at(at(k)); }, [&](index_t k) { return seed_at(at(k)); },
            [&](index_t k, T v) { store(at(k), v); }, ws);
      },
      [&](channel_units<T>& units, auto const& one) {
        planned_values_and_grads<T>(
            one, units.units(), threads, [&](index_t u) { return units.series(u); },
            [&](index_t u) { return units.gradients(u); }, [&](index_t u) { return seed_at(units.pair_of(u)); },
            [&](index_t u, T v) { units.value(u) = v; }, ws);
      },
      [&](channel_units<T> const& units, index_t s) {
        index_t const k = units.split_pair(s);
        auto const [gx, gy] = grads_at(k);
        units.add_split_gradients(s, gx, gy);
        store(k, units.split_value(s));
      },
      ws);
}

}  // namespace resilin::host_detail
