#pragma once
// Values of many pairs on the host: the pairs that fit go in lock-step groups (lockstep.hpp),
// the others one at a time (pair.hpp), all on one parallel_for. Both traversals give the same
// bits, so results never depend on which one ran a pair, nor on the thread count.
#include <algorithm>
#include <vector>
#include <resilin/backend/host/lockstep.hpp>
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

}  // namespace resilin::host_detail
