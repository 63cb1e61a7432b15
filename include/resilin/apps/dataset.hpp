#pragma once
// A labelled set of series (batch, max_length, channels), padded with zeros, with per-series
// lengths, and the UCR 2018 TSV reader: one series per line, `label<TAB>v1<TAB>...<TAB>vL`,
// ragged lines allowed, values in plain or exponent form. Missing values (`NaN`, `?`, an empty
// field) are refused with the line number: resilin's measures need finite input.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <istream>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/views.hpp>

namespace resilin {

/// Series with labels. Values are row-major (batch, max_length, channels); series b holds
/// lengths[b] samples, the rest of its row is 0. Labels are kept as the file wrote them.
template <std::floating_point T = double>
struct dataset {
  using value_type = T;
  std::vector<std::string> labels;  // (batch)
  std::vector<T> values;            // (batch, max_length, channels)
  std::vector<index_t> lengths;     // (batch)
  index_t max_length = 0;
  index_t channels = 1;

  index_t size() const noexcept { return static_cast<index_t>(labels.size()); }
  bool empty() const noexcept { return labels.empty(); }

  /// Throws resilin::invalid_argument ("what: ...") unless the public fields agree: one length
  /// per label, each in [1, max_length], channels >= 1, and values of (size, max_length,
  /// channels). The readers and push_back keep them so; a dataset filled by hand may not.
  void validate(std::string_view what) const {
    detail::require(channels >= 1, what, ": channels must be >= 1, got ", channels);
    detail::require(lengths.size() == labels.size(), what, ": ", labels.size(), " labels for ",
                    lengths.size(), " lengths");
    for (std::size_t b = 0; b < lengths.size(); ++b)
      detail::require(lengths[b] >= 1 && lengths[b] <= max_length, what, ": lengths[", b,
                      "] must be in [1, max_length = ", max_length, "], got ", lengths[b]);
    auto const expected = static_cast<std::size_t>(size() * max_length * channels);
    detail::require(values.size() == expected, what, ": ", values.size(),
                    " values, expected size * max_length * channels = ", expected);
  }

  /// A view for the alignment API; valid while this dataset is alive and unchanged.
  batch_view<T const> view() const noexcept {
    return {values.data(), size(), max_length, channels, lengths.data()};
  }
  batch_view<T> view() noexcept {
    return {values.data(), size(), max_length, channels, lengths.data()};
  }
  /// Series b (its first lengths[b] samples).
  series_view<T const> series(index_t b) const noexcept { return view()[b]; }

  /// The same data in another value type.
  template <std::floating_point U>
  dataset<U> as() const {
    dataset<U> r;
    r.labels = labels;
    r.values.assign(values.begin(), values.end());
    r.lengths = lengths;
    r.max_length = max_length;
    r.channels = channels;
    return r;
  }

  /// Builds a padded dataset from series stored back to back: series b is the next
  /// lengths[b] * channels values of `flat`.
  static dataset from_ragged(std::vector<std::string> labels, std::span<T const> flat,
                             std::vector<index_t> lengths, index_t channels = 1) {
    detail::require(channels >= 1, "channels must be >= 1, got ", channels);
    detail::require(labels.size() == lengths.size(), "dataset: ", labels.size(),
                    " labels for ", lengths.size(), " lengths");
    dataset r;
    r.channels = channels;
    index_t total = 0;
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      detail::require(lengths[b] >= 1, "dataset: lengths[", b, "] must be >= 1, got ",
                      lengths[b]);
      r.max_length = std::max(r.max_length, lengths[b]);
      total += lengths[b] * channels;
    }
    detail::require(static_cast<index_t>(flat.size()) == total, "dataset: ", flat.size(),
                    " values for lengths that sum to ", total, " values");
    auto const row = static_cast<std::size_t>(r.max_length * channels);
    r.values.assign(lengths.size() * row, T(0));
    auto src = flat.begin();
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      auto const n = static_cast<std::ptrdiff_t>(lengths[b] * channels);
      std::copy(src, src + n, r.values.begin() + static_cast<std::ptrdiff_t>(b * row));
      src += n;
    }
    r.labels = std::move(labels);
    r.lengths = std::move(lengths);
    return r;
  }

  /// Appends one series of (length, channels) values; pads the batch when it grows longer.
  /// series_values may be one of this dataset's own series (ds.push_back(l, ds.series(0))
  /// duplicates it). On an exception (memory) the dataset is unchanged.
  void push_back(std::string label, std::span<T const> series_values) {
    auto const n = static_cast<index_t>(series_values.size());
    detail::require(channels >= 1, "dataset::push_back: channels must be >= 1, got ", channels);
    detail::require(n >= 1 && n % channels == 0, "dataset::push_back: a series of ", n,
                    " values does not hold whole samples of ", channels, " channels");
    index_t const length = n / channels;
    // everything that allocates before anything changes: then the appends cannot throw
    reserve_one_more(labels);
    reserve_one_more(lengths);
    std::vector<T> own;  // growing values would free what series_values points to
    if (points_into_values(series_values)) {
      own.assign(series_values.begin(), series_values.end());
      series_values = own;
    }
    auto const at = static_cast<std::size_t>(size() * std::max(max_length, length) * channels);
    if (length > max_length) {
      repad(length, 1);
    } else {
      auto const row = static_cast<std::size_t>(max_length * channels);
      reserve_one_more(values, row);
      values.resize(at + row, T(0));
    }
    std::copy(series_values.begin(), series_values.end(), values.begin() + static_cast<std::ptrdiff_t>(at));
    labels.push_back(std::move(label));
    lengths.push_back(length);
  }

 private:
  /// Pads every series to new_max samples, with room for `extra` more series of zeros.
  void repad(index_t new_max, std::size_t extra) {
    auto const b = static_cast<std::size_t>(size());
    auto const old_row = static_cast<std::size_t>(max_length * channels);
    auto const new_row = static_cast<std::size_t>(new_max * channels);
    std::vector<T> grown((b + extra) * new_row, T(0));
    for (std::size_t s = 0; s < b; ++s)
      std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(s * old_row), old_row,
                  grown.begin() + static_cast<std::ptrdiff_t>(s * new_row));
    values = std::move(grown);
    max_length = new_max;
  }

  /// Room for `count` more elements, growing geometrically (reserve alone would reallocate on
  /// every push_back).
  template <class V>
  static void reserve_one_more(std::vector<V>& v, std::size_t count = 1) {
    if (v.capacity() - v.size() < count) v.reserve(std::max(2 * v.capacity(), v.size() + count));
  }

  bool points_into_values(std::span<T const> s) const noexcept {
    std::less<T const*> const before;  // a total order, also for pointers into other arrays
    return !s.empty() && !values.empty() && !before(s.data(), values.data()) &&
           before(s.data(), values.data() + values.size());
  }
};

/// Z-normalises every series in place, per channel, over its own length (population standard
/// deviation). A constant series (deviation below ~16 ulp of its magnitude) becomes zeros.
template <std::floating_point T>
void z_normalise(dataset<T>& ds) {
  auto const v = ds.view();
  for (index_t b = 0; b < v.batch; ++b) {
    series_view<T> const s = v[b];
    for (index_t c = 0; c < s.channels; ++c) {
      double scale = 0;
      bool same = true;
      for (index_t i = 0; i < s.length; ++i) {
        scale = std::max(scale, std::abs(static_cast<double>(s(i, c))));
        same = same && s(i, c) == s(0, c);
      }
      // the moments in units of the power of two at the largest magnitude: exact scaling (the
      // z-scores keep their bits), and neither the squares of values near the top of double's
      // range overflow (their z-scores became zeros) nor those below 1e-154 underflow (1e-200,
      // 2e-200, 3e-200 became zeros)
      double const unit = scale > 0 && std::isfinite(scale) ? std::ldexp(1.0, std::ilogb(scale)) : 1.0;
      auto const n = static_cast<double>(s.length);
      double total = 0;
      for (index_t i = 0; i < s.length; ++i) total += static_cast<double>(s(i, c)) / unit;
      double const mean = total / n;
      // the sum's rounding (about n eps |x|) corrected from the deviations, kept apart from the
      // mean (added to it, a correction below half its ulp rounded away): left in, it alone
      // exceeded the constant-series threshold, and 1000 samples of 0.1 became all +1 or -1
      double residual = 0;
      for (index_t i = 0; i < s.length; ++i) residual += static_cast<double>(s(i, c)) / unit - mean;
      double const correction = residual / n;
      auto const deviation = [&](index_t i) { return (static_cast<double>(s(i, c)) / unit - mean) - correction; };
      double ss = 0;
      for (index_t i = 0; i < s.length; ++i) ss += deviation(i) * deviation(i);
      double const sd = std::sqrt(ss / n);
      bool const constant = same || !(sd > 16 * std::numeric_limits<T>::epsilon() * (scale / unit));
      for (index_t i = 0; i < s.length; ++i) s(i, c) = constant ? T(0) : static_cast<T>(deviation(i) / sd);
    }
  }
}

namespace detail {
inline std::string_view trim(std::string_view s) noexcept {
  auto const ws = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return s;
}

/// A TSV data line without trailing blanks (spaces, tabs, CR) and leading spaces: a leading tab
/// stays, since it ends an empty label (refused, where trimming it shifted every field).
inline std::string_view trim_line(std::string_view s) noexcept {
  auto const blank = [](char ch) { return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n'; };
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\r')) s.remove_prefix(1);
  return s;
}

inline std::string_view trim_spaces(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

/// Drops a UTF-8 byte order mark from the first line (editors on Windows write one; kept, it
/// became part of the first label or header).
inline void drop_byte_order_mark(std::string& text, std::size_t line) {
  if (line == 1 && text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
}

/// At most the first 40 characters of s, for a message ("..." where it was cut).
inline std::string excerpt(std::string_view s) {
  constexpr std::size_t most = 40;
  return s.size() <= most ? std::string(s) : std::string(s.substr(0, most)) + "...";
}

/// Refuses a line that still holds a carriage return: a file with CR-only line endings (old Mac
/// style) reads as one line, whose values then failed with a raw CR inside the message.
inline void check_no_carriage_return(std::string_view l, std::string_view source, std::size_t line) {
  require(l.find('\r') == std::string_view::npos, source, ":", line,
          ": a carriage return inside a line: the file's lines end in CR alone (old Mac style); "
          "convert them to LF or CRLF");
}

/// One value field of a TSV line as T; throws naming the source, line and field (and the
/// channel, 1-based, when it is not 0: .ts cases have several).
template <std::floating_point T>
T parse_value(std::string_view field, std::string_view source, std::size_t line,
              std::size_t column, std::size_t channel = 0) {
  std::string_view const f = trim_spaces(field);
  // the message is built only on failure (built for every value, it was 3/4 of a file's parsing)
  auto const fail = [&](auto const&... what) {
    std::string const where = channel ? message("channel ", channel, ", value ") : std::string("value ");
    RESILIN_THROW(invalid_argument(message(source, ":", line, ": ", where, column, what...)));
  };
  if (f.empty()) fail(" is empty (missing values are not supported)");
  if (f == "?") fail(" is missing ('?'; missing values are not supported)");
  std::string_view num = f;
  if (num.front() == '+') {  // from_chars takes no '+'; one is allowed, before a digit or '.'
    num.remove_prefix(1);
    if (num.empty() || num.front() == '+' || num.front() == '-') fail(" is not a number: '", f, "'");
  }
  T x{};
  auto const [end, ec] = std::from_chars(num.data(), num.data() + num.size(), x);
  if (ec == std::errc::result_out_of_range) {
    // below the smallest normal number (1e-50 in float): rounded as strtod rounds, to a
    // subnormal or zero; only magnitudes above the largest finite value are refused
    std::string const copy(f);
    char* stop = nullptr;
    double const d = std::strtod(copy.c_str(), &stop);
    bool const tiny = stop == copy.c_str() + copy.size() && std::isfinite(d) &&
                      std::abs(d) < static_cast<double>(std::numeric_limits<T>::min());
    if (!tiny) fail(" is out of range for the value type: '", f, "'");
    return static_cast<T>(d);
  }
  if (ec != std::errc{} || end != num.data() + num.size()) fail(" is not a number: '", f, "'");
  if (std::isnan(x)) fail(" is missing ('", f, "'; missing values are not supported)");
  if (!std::isfinite(x)) fail(" is not finite: '", f, "'");
  return x;
}
}  // namespace detail

/// Reads UCR 2018 TSV text from a stream; `source` names it in error messages. Blank lines are
/// skipped. Throws resilin::invalid_argument ("source:line: ...") for a field that is not a
/// finite number, a missing value, a line with a label but no values, or no series at all.
template <std::floating_point T = double>
dataset<T> parse_ucr_tsv(std::istream& in, std::string_view source) {
  std::vector<std::string> labels;
  std::vector<T> flat;  // every series, concatenated
  std::vector<index_t> lengths;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    detail::drop_byte_order_mark(text, line);
    std::string_view const l = detail::trim_line(text);
    if (l.empty()) continue;
    detail::check_no_carriage_return(l, source, line);
    std::size_t tab = l.find('\t');
    std::string_view const label = detail::trim_spaces(l.substr(0, tab));
    detail::require(!label.empty(), source, ":", line, ": the label is empty");
    // commas or spaces instead: another format (the UCR archive before 2018 was comma-separated)
    detail::require(tab != std::string_view::npos || label.find_first_of(", ") == std::string_view::npos,
                    source, ":", line, ": no tab in '", detail::excerpt(label), "': UCR 2018 TSV "
                    "separates the label and the values by tabs, not commas or spaces");
    detail::require(tab != std::string_view::npos, source, ":", line, ": the line has a label ('",
                    detail::excerpt(label), "') but no values");
    index_t column = 0;
    while (tab != std::string_view::npos) {
      std::size_t const start = tab + 1;
      tab = l.find('\t', start);
      std::string_view const field =
          l.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start);
      flat.push_back(detail::parse_value<T>(field, source, line, static_cast<std::size_t>(++column)));
    }
    labels.emplace_back(label);
    lengths.push_back(column);
  }
  if (in.bad())
    RESILIN_THROW(runtime_error(detail::message(source, ":", line + 1, ": read error")));
  detail::require(!labels.empty(), source, ": no series (the file is empty)");
  return dataset<T>::from_ragged(std::move(labels), flat, std::move(lengths));
}

/// Reads a UCR 2018 TSV file. Throws resilin::runtime_error when the file cannot be opened,
/// and resilin::invalid_argument ("path:line: ...") for bad content (see parse_ucr_tsv).
namespace detail {
/// ": <the system's reason>" for errno value e, or nothing when e is 0.
inline std::string system_reason(int e) {
  return e ? ": " + std::generic_category().message(e) : std::string();
}

/// Opens a data file for reading; resilin::runtime_error (with the system's reason) otherwise.
inline std::ifstream open_data_file(std::string const& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    RESILIN_THROW(runtime_error(message("cannot read '", path, "': it is a directory")));
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int const e = errno;
    RESILIN_THROW(runtime_error(message("cannot open '", path, "'", system_reason(e))));
  }
  return in;
}
}  // namespace detail

template <std::floating_point T = double>
dataset<T> read_ucr_tsv(std::string const& path) {
  std::ifstream in = detail::open_data_file(path);
  return parse_ucr_tsv<T>(in, path);
}

}  // namespace resilin
