#pragma once
// A fork-join loop over contiguous task ranges with std::thread (no global pool, no state).
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

namespace resilin::lct::detail {

/// Number of workers for `tasks` tasks: min(cap or hardware threads, tasks / min_tasks), >= 1.
inline unsigned worker_count(std::uint64_t tasks, unsigned cap, std::uint64_t min_tasks_per_worker = 1) {
  // hardware_concurrency only without a cap: glibc reads /sys for it, a few us per call
  unsigned const hw = cap ? cap : std::thread::hardware_concurrency();
  std::uint64_t w = hw ? hw : 1;
  std::uint64_t const by_work = min_tasks_per_worker ? tasks / min_tasks_per_worker : tasks;
  if (w > by_work) w = by_work;
  return w ? static_cast<unsigned>(w) : 1u;
}

/// Calls f(worker, begin, end) for `workers` contiguous slices of [0, tasks); worker 0 runs on
/// the calling thread, and so do the slices of workers whose thread could not be started
/// (resource limits: the std::thread vector was destroyed with threads running, and
/// std::terminate ended the process). The exception of the lowest-numbered failing worker is
/// rethrown.
template <class F>
void parallel_for(std::uint64_t tasks, unsigned workers, F&& f) {
  if (workers <= 1 || tasks <= 1) {
    f(0u, std::uint64_t{0}, tasks);
    return;
  }
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  std::vector<std::exception_ptr> errors(workers);
  auto slice = [&](unsigned w) {
    std::uint64_t const b = tasks * w / workers, e = tasks * (w + 1) / workers;
    try { f(w, b, e); } catch (...) { errors[w] = std::current_exception(); }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  unsigned started = 1;
  try {
    for (; started < workers; ++started) threads.emplace_back(slice, started);
  } catch (...) {  // std::system_error (no more threads) or std::bad_alloc: the rest runs here
  }
  slice(0);
  for (unsigned w = started; w < workers; ++w) slice(w);
  for (auto& t : threads) t.join();
  for (auto& e : errors) if (e) std::rethrow_exception(e);
#else
  // without exceptions a failure aborts where it happens (RESILIN_LCT_THROW), and so does a
  // thread that cannot be started
  auto slice = [&](unsigned w) { f(w, tasks * w / workers, tasks * (w + 1) / workers); };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (unsigned w = 1; w < workers; ++w) threads.emplace_back(slice, w);
  slice(0);
  for (auto& t : threads) t.join();
#endif
}

}  // namespace resilin::lct::detail
