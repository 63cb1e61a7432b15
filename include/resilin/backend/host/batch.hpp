#pragma once
// Values (and gradients) of many pairs on the host: the pairs that fit go in lock-step groups
// (lockstep_groups.hpp), the others one at a time (pair.hpp), all on one
// parallel_for. Both traversals give the same bits, so results never depend on which one ran a
// pair, nor on the thread count.
#include <algorithm>
#include <vector>
#include <resilin/backend/host/lockstep_groups.hpp>
#include <resilin/backend/host/pair.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/thread_pool.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Pairs planned at a time by batch_values: the plan holds an index per pair (and its grouping
/// another while it is formed), so a whole 20000 x 20000 pairwise matrix planned at once held
/// 16 bytes per pair beside the 8 of its output.
inline constexpr index_t batch_plan_pairs = index_t(1) << 18;

/// The pairs [0, count) planned batch_plan_pairs at a time (plan_lockstep, with `training`;
/// pair_at(k) gives (x_k, y_k)), each chunk on one parallel_for of up to `threads` threads with
/// one workspace each (ws.size() >= the threads parallel_for uses): group(members, ws) for each
/// group (lockstep_pairs<T> pair indices), single(k, ws) for each other pair.
template <class T, class Cost, class Smooth, class PairAt, class Group, class Single>
void run_planned(measure<Cost, Smooth> const& m, index_t count, int threads, bool training, PairAt&& pair_at,
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
        for (int g = 0; g < G; ++g) members[g] = first + plan.grouped[static_cast<std::size_t>(task * G + g)];
        group(members, wsw);
      } else {
        single(first + plan.rest[static_cast<std::size_t>(task - groups)], wsw);
      }
    });
  }
}

/// store(k, value(m, x_k, y_k)) for k in [0, count), where pair_at(k) gives (x_k, y_k); threads
/// and ws as run_planned's.
template <class T, class Cost, class Smooth, class PairAt, class Store>
void batch_values(measure<Cost, Smooth> const& m, index_t count, int threads, PairAt&& pair_at,
                  Store&& store, std::vector<workspace<T>>& ws) {
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

/// store(k, value_and_grad(m, x_k, y_k, gx_k, gy_k, seed_k)) for k in [0, count), where
/// pair_at(k) gives (x_k, y_k), grads_at(k) the gradient views (zeroed; called once per pair)
/// and seed_at(k) the seed; threads and ws as run_planned's. Soft-DTW and soft-MSM pairs that
/// fit train in lock-step groups (run_lockstep_training_group).
template <class T, class Cost, class Smooth, class PairAt, class GradsAt, class SeedAt, class Store>
void batch_values_and_grads(measure<Cost, Smooth> const& m, index_t count, int threads, PairAt&& pair_at,
                            GradsAt&& grads_at, SeedAt&& seed_at, Store&& store, std::vector<workspace<T>>& ws) {
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

}  // namespace resilin::host_detail
