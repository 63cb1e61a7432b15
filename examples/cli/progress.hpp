#pragma once
// Long work runs in chunks of rows; after a second, each finished chunk reports on stderr
// (a self-overwriting line on a terminal, a line every few seconds otherwise). Results never
// go to stderr, so scripts reading stdout are unaffected.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
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

/// A status line on stderr for long work: silent during the first second, then at most one
/// line every 0.25 s on a terminal (overwriting itself) or every 5 s otherwise.
class status_line {
 public:
  using clock = std::chrono::steady_clock;

  explicit status_line(std::string command) : command_(std::move(command)), start_(clock::now()) {
#if RESILIN_CLI_HAS_ISATTY
    tty_ = isatty(fileno(stderr)) != 0;
#endif
  }
  status_line(status_line const&) = delete;
  status_line& operator=(status_line const&) = delete;
  ~status_line() { finish(); }

  double seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

  /// Whether a line is due now; `urgent` skips the throttle (not the first second).
  bool due(bool urgent = false) const {
    if (seconds() < 1.0) return false;
    if (!shown_ || urgent) return true;
    return std::chrono::duration<double>(clock::now() - last_).count() >= (tty_ ? 0.25 : 5.0);
  }

  /// Prints "resilin <command>: <text>, t s".
  void show(std::string const& text) {
    last_ = clock::now();
    std::fprintf(stderr, "%sresilin %s: %s, %.1f s%s", tty_ ? "\r\033[K" : "", command_.c_str(),
                 text.c_str(), seconds(), tty_ ? "" : "\n");
    std::fflush(stderr);
    shown_ = on_screen_ = true;
  }

  /// Ends a self-overwriting line.
  void finish() {
    if (on_screen_ && tty_) std::fputc('\n', stderr);
    on_screen_ = false;
  }

 private:
  std::string command_;
  clock::time_point start_, last_{};
  bool tty_ = false;
  bool shown_ = false;      // reported at least once
  bool on_screen_ = false;  // a line is on screen that finish() must end
};

/// Progress through a known number of units: "resilin <command>: done/total <unit> (p%), t s".
class progress {
 public:
  progress(std::string command, std::string unit, index_t total)
      : line_(std::move(command)), unit_(std::move(unit)), total_(total) {}

  double seconds() const { return line_.seconds(); }

  void update(index_t done) {
    if (done >= total_ || !line_.due()) return;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%lld/%lld %s (%.0f%%)", static_cast<long long>(done),
                  static_cast<long long>(total_), unit_.c_str(),
                  100.0 * static_cast<double>(done) / static_cast<double>(total_));
    line_.show(buf);
  }
  void finish() { line_.finish(); }

 private:
  status_line line_;
  std::string unit_;
  index_t total_;
};

/// Rows [begin, end) of a batch.
template <class T>
r::batch_view<T> rows(r::batch_view<T> v, index_t begin, index_t end) noexcept {
  return {v.data + begin * v.max_length * v.channels, end - begin, v.max_length, v.channels,
          v.lengths ? v.lengths + begin : nullptr};
}

/// Calls f(begin, end) over consecutive row ranges covering [0, total) of rows of `per_row`
/// pairs each: about 40 chunks, each of at least `min_pairs` pairs so that every chunk still
/// has enough for all threads (or for a GPU call). Counted in pairs, not rows: 16 rows of long
/// series took 28 s before the first report where a few rows are the whole job.
template <class F>
void for_row_chunks(index_t total, index_t per_row, progress& p, F&& f, index_t min_pairs = 16) {
  index_t const least = (min_pairs + std::max<index_t>(per_row, 1) - 1) / std::max<index_t>(per_row, 1);
  index_t const chunk = std::max<index_t>({least, (total + 39) / 40, 1});
  for (index_t begin = 0; begin < total; begin += chunk) {
    index_t const end = std::min(total, begin + chunk);
    try {
      f(begin, end);
    } catch (r::invalid_argument const& e) {
      // the library numbers pairs and rows within its call (a diverged fast-cdtw fit of row 20
      // was reported as row 2): say which rows the call had
      if (begin == 0) throw;
      RESILIN_THROW(r::invalid_argument(r::detail::message(
          e.what(), " (in the call for rows ", begin + 1, " to ", end, ", whose pair and row numbers count from row ",
          begin + 1, ")")));
    }
    p.update(end);
  }
  p.finish();
}

}  // namespace resilin_cli
