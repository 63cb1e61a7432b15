#pragma once
// Reading datasets and writing tab-separated numbers: doubles with %.17g, floats with %.9g
// (both round-trip exactly).
#include <concepts>
#include <cstdio>
#include <string>
#include <resilin/apps/dataset.hpp>
#include <resilin/apps/ts_file.hpp>
#include <resilin/core/error.hpp>

namespace resilin_cli {
namespace r = resilin;

/// A data file (.ts of aeon/sktime, or UCR TSV) in value type T; z-normalised (znorm) from the
/// file's numbers read in double, then rounded to T: normalised after rounding to float, a series
/// with a large offset and small variation (51.50731, 51.50735, ...) became zeros.
template <std::floating_point T>
r::dataset<T> load(std::string const& path, bool znorm) {
  if (!znorm) return r::read_dataset<T>(path);
  auto ds = r::read_dataset<double>(path);
  r::z_normalise(ds);
  if constexpr (std::same_as<T, double>) return ds;
  else return ds.template as<T>();
}

/// Whether a label can be the first field of a UCR TSV line that reads back as the same label:
/// non-empty, no tab or line break, no space or carriage return at either end (the reader trims
/// those).
inline bool tsv_writable_label(std::string const& l) noexcept {
  auto const trimmed = [](char ch) { return ch == ' ' || ch == '\r'; };
  return !l.empty() && l.find_first_of("\t\r\n") == std::string::npos && !trimmed(l.front()) &&
         !trimmed(l.back());
}

/// Buffered tab-separated output on stdout.
class table_writer {
 public:
  template <std::floating_point T>
  void value(T v, bool first) {
    char buf[40];
    int const n = std::snprintf(buf, sizeof buf, std::is_same_v<T, float> ? "%.9g" : "%.17g",
                                static_cast<double>(v));
    if (!first) std::fputc('\t', stdout);
    std::fwrite(buf, 1, static_cast<std::size_t>(n), stdout);
  }
  void end_line() { std::fputc('\n', stdout); }
  void line(std::string const& text) {
    std::fputs(text.c_str(), stdout);
    std::fputc('\n', stdout);
  }
  /// Flushes; a failed write (full disk, closed pipe) becomes an error.
  static void finish() {
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      RESILIN_THROW(r::runtime_error("cannot write the results to stdout"));
  }
};

}  // namespace resilin_cli
