#pragma once
// Long work runs in chunks of rows; after a second, each finished chunk reports on stderr
// (a self-overwriting line on a terminal, a line every few seconds otherwise). Results never
// go to stderr, so scripts reading stdout are unaffected.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <resilin/core/config.hpp>
#include <resilin/core/views.hpp>
#if __has_include(<unistd.h>)
#  include <unistd.h>
#  define RESILIN_CLI_HAS_ISATTY 1
#else
#  define RESILIN_CLI_HAS_ISATTY 0
#endif

namespace resilin_cli {
namespace r = resilin;
using r::index_t;

class progress {
 public:
  using clock = std::chrono::steady_clock;

  /// Reports as "resilin <command>: done/total <unit> (p%), t s".
  progress(std::string command, std::string unit, index_t total)
      : command_(std::move(command)), unit_(std::move(unit)), total_(total), start_(clock::now()), last_(start_) {
#if RESILIN_CLI_HAS_ISATTY
    tty_ = isatty(fileno(stderr)) != 0;
#endif
  }
  progress(progress const&) = delete;
  progress& operator=(progress const&) = delete;
  ~progress() { finish(); }

  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

  void update(index_t done) {
    auto const now = clock::now();
    double const since_start = std::chrono::duration<double>(now - start_).count();
    double const since_last = std::chrono::duration<double>(now - last_).count();
    if (since_start < 1.0 || done >= total_) return;
    if (reported_ && since_last < (tty_ ? 0.25 : 5.0)) return;
    reported_ = true;
    last_ = now;
    std::fprintf(stderr, "%sresilin %s: %lld/%lld %s (%.0f%%), %.1f s%s", tty_ ? "\r" : "",
                 command_.c_str(), static_cast<long long>(done), static_cast<long long>(total_),
                 unit_.c_str(), 100.0 * static_cast<double>(done) / static_cast<double>(total_),
                 since_start, tty_ ? "" : "\n");
    std::fflush(stderr);
    shown_ = true;
  }

  /// Ends a self-overwriting progress line.
  void finish() {
    if (shown_ && tty_) std::fputc('\n', stderr);
    shown_ = false;
  }

 private:
  std::string command_, unit_;
  index_t total_;
  clock::time_point start_, last_;
  bool tty_ = false;
  bool shown_ = false;     // a line is on screen that finish() must end
  bool reported_ = false;  // reported at least once
};

/// Rows [begin, end) of a batch.
template <class T>
r::batch_view<T> rows(r::batch_view<T> v, index_t begin, index_t end) noexcept {
  return {v.data + begin * v.max_length * v.channels, end - begin, v.max_length, v.channels,
          v.lengths ? v.lengths + begin : nullptr};
}

/// Calls f(begin, end) over consecutive row ranges covering [0, total): about 40 chunks, each
/// of at least 16 rows so every chunk still has enough pairs for all threads.
template <class F>
void for_row_chunks(index_t total, progress& p, F&& f) {
  index_t const chunk = std::max<index_t>(16, (total + 39) / 40);
  for (index_t begin = 0; begin < total; begin += chunk) {
    index_t const end = std::min(total, begin + chunk);
    f(begin, end);
    p.update(end);
  }
  p.finish();
}

}  // namespace resilin_cli
