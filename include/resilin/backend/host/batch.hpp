#pragma once
// Values (and gradients) of many pairs on the host: the pairs that fit go in lock-step groups
// (lockstep_groups.hpp), the others one at a time (pair.hpp), all on one
// parallel_for. Both traversals give the same bits, so results never depend on which one ran a
// pair, nor on the thread count.
#include <algorithm>
#include <vector>
#include <resilin/backend/host/lockstep_groups.hpp>
#include <resilin/backend/host/lockstep_training.hpp>
#include <resilin/backend/host/pair.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/thread_pool.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Pairs planned at a time by batch_values: the plan holds an index per pair (and its grouping
/// another while it is formed), so a whole 20000 x 20000 pairwise matrix planned at once held
/// 16 bytes per pair beside the 8 of its output.
inline constexpr index_t batch_plan_pairs = index_t(1) << 18;

/// store(k, value(m, x_k, y_k)) for k in [0, count), where pair_at(k) gives (x_k, y_k); on up to
/// `threads` threads with one workspace each (ws.size() >= the threads parallel_for uses). The
/// pairs are planned and run batch_plan_pairs at a time.
template <class T, class Cost, class Smooth, class PairAt, class Store>
void batch_values(measure<Cost, Smooth> const& m, index_t count, int threads, PairAt&& pair_at,
                  Store&& store, std::vector<workspace<T>>& ws) {
  for (index_t first = 0; first < count; first += batch_plan_pairs) {
    index_t const chunk = std::min(batch_plan_pairs, count - first);
    auto const chunk_pair = [&](index_t k) { return pair_at(first + k); };
    auto const chunk_store = [&](index_t k, T v) { store(first + k, v); };
    lockstep_plan const plan = plan_lockstep<T>(m, chunk, chunk_pair, resolve_threads(threads, chunk));
    index_t const groups = static_cast<index_t>(plan.grouped.size()) / lockstep_pairs<T>;
    index_t const tasks = groups + static_cast<index_t>(plan.rest.size());
    parallel_for(tasks, threads, [&](index_t task, int w) {
      auto& wsw = ws[static_cast<std::size_t>(w)];
      if (task < groups) {
        run_lockstep_group(
            m, plan, task, chunk_pair, chunk_store,
            [&](index_t k) {
              auto const [x, y] = chunk_pair(k);
              return value(m, x, y, wsw);
            },
            wsw.lockstep);
      } else {
        index_t const k = plan.rest[static_cast<std::size_t>(task - groups)];
        auto const [x, y] = chunk_pair(k);
        chunk_store(k, value(m, x, y, wsw));
      }
    });
  }
}

/// store(k, value_and_grad(m, x_k, y_k, gx_k, gy_k, seed_k)) for k in [0, count), where
/// pair_at(k) gives (x_k, y_k), grads_at(k) the gradient views (zeroed; called once per pair)
/// and seed_at(k) the seed; threads and ws as batch_values'. Soft-DTW and soft-MSM pairs that fit
/// train in lock-step groups (lockstep_training.hpp, lockstep_soft_msm.hpp); a pair that a
/// soft-DTW group leaves untrained (its value inaccurate in the exponential domain) trains on
/// its own, as value_and_grad would.
template <class T, class Cost, class Smooth, class PairAt, class GradsAt, class SeedAt, class Store>
void batch_values_and_grads(measure<Cost, Smooth> const& m, index_t count, int threads, PairAt&& pair_at,
                            GradsAt&& grads_at, SeedAt&& seed_at, Store&& store, std::vector<workspace<T>>& ws) {
  auto const one = [&](index_t k, workspace<T>& w) {
    auto const [x, y] = pair_at(k);
    auto const [gx, gy] = grads_at(k);
    store(k, value_and_grad(m, x, y, gx, gy, seed_at(k), w));
  };
  for (index_t first = 0; first < count; first += batch_plan_pairs) {
    index_t const chunk = std::min(batch_plan_pairs, count - first);
    auto const chunk_pair = [&](index_t k) { return pair_at(first + k); };
    lockstep_plan const plan = plan_lockstep<T>(m, chunk, chunk_pair, resolve_threads(threads, chunk), true);
    index_t const groups = static_cast<index_t>(plan.grouped.size()) / lockstep_pairs<T>;
    index_t const tasks = groups + static_cast<index_t>(plan.rest.size());
    parallel_for(tasks, threads, [&](index_t task, int w) {
      auto& wsw = ws[static_cast<std::size_t>(w)];
      if (task >= groups) {
        one(first + plan.rest[static_cast<std::size_t>(task - groups)], wsw);
        return;
      }
      if constexpr (lockstep_trains<T, Cost, Smooth>) {
        constexpr int G = lockstep_pairs<T>;
        index_t const* const members = plan.grouped.data() + task * G;
        oriented_training_pair<T> pairs[G];
        for (int g = 0; g < G; ++g) {
          index_t const k = first + members[g];
          auto const [x, y] = pair_at(k);
          auto const [gx, gy] = grads_at(k);
          pairs[g] = oriented_training_pair<T>::of(x, y, gx, gy, seed_at(k));
        }
        T values[G];
        bool trained[G];
        band_geometry const band = m.band.geometry(pairs[0].x.length, pairs[0].y.length);
        if constexpr (lockstep_soft_msm_measure<T, Cost, Smooth>) {
          lockstep_soft_msm_values_and_grads(pairs, band, m.cost, m.smooth, values, wsw.lockstep);
          std::fill(trained, trained + G, true);
        } else {
          lockstep_soft_cell<T> const cell(m.smooth);
          lockstep_values_and_grads<T, typename Cost::distance_type>(pairs, band, cell, values, trained, wsw.lockstep);
        }
        for (int g = 0; g < G; ++g) {
          index_t const k = first + members[g];
          if (trained[g]) store(k, values[g]);
          else store(k, value_and_grad(m, pairs[g].x, pairs[g].y, pairs[g].gx, pairs[g].gy, pairs[g].seed, wsw));
        }
      }
    });
  }
}

}  // namespace resilin::host_detail
