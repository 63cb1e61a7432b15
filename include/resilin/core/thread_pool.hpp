#pragma once
// parallel_for: runs f(task, worker) for task in [0, count) on up to `threads` threads for the
// duration of one call (no global pool, no global state). Tasks are claimed dynamically, but
// every task writes only its own outputs, so results do not depend on the schedule. The first
// exception thrown by a task is rethrown on the calling thread after all workers stop. Workers
// whose thread cannot be started are left out (the others claim their tasks).
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/function_ref.hpp>

namespace resilin {

/// Threads to use for `requested` (0 = all hardware threads), never more than `tasks`. Throws
/// resilin::invalid_argument for a negative count: host_backend{-3}, built without
/// with_threads(), ran on every core.
inline int resolve_threads(int requested, index_t tasks) {
  detail::require(requested >= 0, "threads must be >= 0 (0 = all cores), got ", requested);
  // hardware_concurrency only when asked for all cores: glibc reads /sys for it (a few us per
  // call, which the many small batches of pairwise_grads' rows paid on one thread)
  unsigned const hw = requested > 0 ? 0u : std::thread::hardware_concurrency();
  int const avail = requested > 0 ? requested : static_cast<int>(hw == 0 ? 1 : hw);
  return static_cast<int>(std::max<index_t>(1, std::min<index_t>(avail, tasks)));
}

namespace detail {

/// parallel_for's threads (workers >= 2), compiled once rather than once per task's lambda.
inline void run_on_threads(index_t count, int workers, function_ref<void(index_t, int)> f) {
  std::atomic<index_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto body = [&](int worker) {
    try {
      for (index_t t = next.fetch_add(1); t < count && !failed.load(); t = next.fetch_add(1))
        f(t, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      failed.store(true);
    }
  };
  {
    std::vector<std::jthread> pool;
    try {
      pool.reserve(static_cast<std::size_t>(workers - 1));
      for (int w = 1; w < workers; ++w) pool.emplace_back(body, w);
    } catch (...) {  // no more threads (resource limits): those started and this one claim every
    }                // task (the error reached the caller after the work was done, results lost)
    body(0);
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace detail

template <class F>
void parallel_for(index_t count, int threads, F&& f) {
  if (count <= 0) return;
  int const workers = resolve_threads(threads, count);
  if (workers == 1) {
    for (index_t t = 0; t < count; ++t) f(t, 0);
    return;
  }
  detail::run_on_threads(count, workers, f);
}

}  // namespace resilin
