#pragma once
// aeon / sktime `.ts` files (univariate and multivariate, equal and unequal length):
//
//     # comments
//     @problemName BasicMotions
//     @univariate false            (or @dimensions 6)
//     @equalLength true
//     @classLabel true Standing Running Walking Badminton
//     @data
//     0.1,0.2,...:-0.3,0.1,...:Standing        one case a line: channels split by ':', values
//                                             by ',', the class label last when @classLabel true
//
// Every channel of one case must have the same length (the alignment compares whole samples);
// cases may differ in length. Missing values ('?', 'NaN', empty) are refused with the line
// number, as are time-stamped data (`@timeStamps true`), regression data (`@targetLabel true`),
// labels outside the declared classes,
// cases whose channel count differs from the first case's or from the header's (`@univariate
// true`: 1, `@dimensions d`; headers that disagree with each other too), and, under
// `@equalLength true`, cases whose length differs from the first case's. The header must say
// `@classLabel true ...` or `@classLabel false`: without it aeon reads the last ':' field as
// the label and an unlabelled reading would take it as a channel, so such files are refused.
// A UTF-8 byte order mark before the first line is skipped.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>
#include <resilin/apps/dataset.hpp>
#include <resilin/core/error.hpp>

namespace resilin {

namespace detail {
inline bool ts_true(std::string_view v) noexcept { return v == "true" || v == "True" || v == "TRUE"; }

/// The words of a header line: separated by runs of spaces and tabs.
inline std::vector<std::string_view> header_words(std::string_view s) {
  std::vector<std::string_view> words;
  std::size_t at = 0;
  while (true) {
    at = s.find_first_not_of(" \t", at);
    if (at == std::string_view::npos) return words;
    std::size_t const end = s.find_first_of(" \t", at);
    words.push_back(s.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) return words;
    at = end;
  }
}

/// Splits on `sep` (no trimming).
inline std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    std::size_t const at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}
}  // namespace detail

/// Reads `.ts` text from a stream; `source` names it in error messages.
template <std::floating_point T = double>
dataset<T> parse_ts(std::istream& in, std::string_view source) {
  bool labelled = false, in_data = false, label_declared = false;
  std::vector<std::string> classes;
  std::vector<std::string> labels;
  std::vector<T> flat;  // every case, (length, channels) row-major, concatenated
  std::vector<index_t> lengths;
  index_t channels = 0;
  index_t declared_channels = 0;  // 0: not declared
  std::string declared_by;        // the header that declared them, for the message
  bool equal_length = false;
  std::string text;
  std::size_t line = 0;
  auto const declare_channels = [&](index_t d, std::string_view header) {
    // `@univariate true` then `@dimensions 2` kept the last one, the other order was refused
    detail::require(declared_channels == 0 || declared_channels == d, source, ":", line, ": ", header,
                    " contradicts ", declared_by);
    declared_channels = d;
    declared_by = detail::message(header, " (line ", line, ")");
  };
  while (std::getline(in, text)) {
    ++line;
    detail::drop_byte_order_mark(text, line);
    std::string_view const l = detail::trim(text);
    detail::check_no_carriage_return(l, source, line);  // before '#': files often start with one
    if (l.empty() || l.front() == '#') continue;
    if (!in_data) {
      detail::require(l.front() == '@', source, ":", line, ": expected a header line starting "
                      "with '@' or @data, got '", l.substr(0, 40), "'");
      auto const words = detail::header_words(l);  // not empty: l starts with '@'
      // keys in any letter case (@classLabel, @ClassLabel and @classlabel are all written)
      std::string key(words[0]);
      for (char& ch : key) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
      std::string_view const value = words.size() > 1 ? words[1] : std::string_view{};
      if (key == "@data") {
        detail::require(label_declared, source, ":", line, ": the header has no @classLabel line: "
                        "write '@classLabel true <labels>' or '@classLabel false' (aeon reads the "
                        "last ':' field of each case as its label where the line is missing)");
        in_data = true;
      } else if (key == "@timestamps") {
        detail::require(!detail::ts_true(value), source, ":", line,
                        ": time-stamped .ts data is not supported");
      } else if (key == "@targetlabel") {
        // a regression target after the last ':' would be read as one more channel
        detail::require(!detail::ts_true(value), source, ":", line,
                        ": regression .ts data (@targetLabel true) is not supported: resilin "
                        "reads class labels (@classLabel)");
      } else if (key == "@classlabel") {
        labelled = detail::ts_true(value);
        label_declared = true;
        for (std::size_t w = 2; w < words.size(); ++w) classes.emplace_back(words[w]);
      } else if (key == "@univariate") {
        if (detail::ts_true(value)) declare_channels(1, "@univariate true");
      } else if (key == "@dimensions" || key == "@dimension") {
        index_t d = 0;
        auto const [end, ec] = std::from_chars(value.data(), value.data() + value.size(), d);
        detail::require(ec == std::errc{} && end == value.data() + value.size() && d >= 1, source,
                        ":", line, ": @dimensions needs a positive whole number, got '", value, "'");
        declare_channels(d, detail::message("@dimensions ", d));
      } else if (key == "@equallength") {
        equal_length = detail::ts_true(value);
      }
      continue;  // other headers (@problemName, ...) are informative
    }
    auto fields = detail::split(l, ':');
    std::string label;
    if (labelled) {
      detail::require(fields.size() >= 2, source, ":", line,
                      ": a case needs values and a class label separated by ':'");
      label = std::string(detail::trim_spaces(fields.back()));
      fields.pop_back();
      detail::require(!label.empty(), source, ":", line, ": the class label after the last ':' is empty");
      detail::require(classes.empty() ||
                          std::find(classes.begin(), classes.end(), label) != classes.end(),
                      source, ":", line, ": class label '", label,
                      "' is not one of those declared by @classLabel");
    }
    auto const d = static_cast<index_t>(fields.size());
    detail::require(declared_channels == 0 || d == declared_channels, source, ":", line, ": ", d,
                    " channels, but the header says ", declared_channels, ": ", declared_by);
    if (channels == 0) channels = d;
    detail::require(d == channels, source, ":", line, ": ", d, " channels, but the first case has ",
                    channels);
    std::vector<std::vector<T>> dims(fields.size());
    for (std::size_t c = 0; c < fields.size(); ++c) {
      auto const values = detail::split(fields[c], ',');
      for (std::size_t k = 0; k < values.size(); ++k)
        dims[c].push_back(detail::parse_value<T>(values[k], source, line, k + 1, c + 1));
      detail::require(dims[c].size() == dims[0].size(), source, ":", line, ": channel ", c + 1,
                      " has ", dims[c].size(), " values, channel 1 has ", dims[0].size(),
                      " (the channels of a case must have equal lengths)");
    }
    auto const length = static_cast<index_t>(dims[0].size());
    detail::require(!equal_length || lengths.empty() || length == lengths.front(), source, ":", line,
                    ": ", length, " values per channel, but @equalLength true and the first case has ",
                    lengths.empty() ? 0 : lengths.front());
    for (index_t t = 0; t < length; ++t)
      for (std::size_t c = 0; c < dims.size(); ++c) flat.push_back(dims[c][static_cast<std::size_t>(t)]);
    labels.push_back(std::move(label));
    lengths.push_back(length);
  }
  if (in.bad())
    RESILIN_THROW(runtime_error(detail::message(source, ":", line + 1, ": read error")));
  detail::require(in_data, source, ": no @data line");
  detail::require(!labels.empty(), source, ": no cases after @data");
  return dataset<T>::from_ragged(std::move(labels), flat, std::move(lengths), channels);
}

/// Reads a `.ts` file (see parse_ts); resilin::runtime_error when it cannot be opened.
template <std::floating_point T = double>
dataset<T> read_ts(std::string const& path) {
  std::ifstream in = detail::open_data_file(path);
  return parse_ts<T>(in, path);
}

/// Reads a data set by extension: `.ts` (aeon/sktime; any letter case), anything else UCR
/// 2018 TSV.
template <std::floating_point T = double>
dataset<T> read_dataset(std::string const& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& ch : ext) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
  if (ext == ".ts") return read_ts<T>(path);
  return read_ucr_tsv<T>(path);
}

/// Whether write_ts can write l as the label of a case of a labelled set: non-empty, without
/// blanks, ':' or ',' (the .ts separators).
inline bool ts_writable_label(std::string_view l) noexcept {
  return !l.empty() && l.find_first_of(" \t\r\n:,") == std::string_view::npos;
}

/// Writes `ds` as `.ts` text that parse_ts reads back to the same values (every value with
/// enough digits to round-trip: 17 significant in double, 9 in float): @classLabel false when
/// every label is empty, else true with the labels in order of first appearance. Throws
/// resilin::invalid_argument for labels .ts cannot hold (empty beside others, or containing
/// blanks, ':' or ','), and resilin::runtime_error when the stream fails.
template <std::floating_point T>
void write_ts(std::ostream& out, dataset<T> const& ds, std::string_view problem_name) {
  ds.validate("write_ts");
  bool const labelled = std::any_of(ds.labels.begin(), ds.labels.end(), [](auto const& l) { return !l.empty(); });
  std::vector<std::string> classes;
  for (std::size_t b = 0; b < ds.labels.size() && labelled; ++b) {
    std::string const& l = ds.labels[b];
    detail::require(ts_writable_label(l), "write_ts: label ",
                    b, " ('", l, "') cannot be written to .ts (empty, or with blanks, ':' or ',')");
    if (std::find(classes.begin(), classes.end(), l) == classes.end()) classes.push_back(l);
  }
  bool const equal = std::all_of(ds.lengths.begin(), ds.lengths.end(),
                                 [&](index_t n) { return n == ds.lengths.front(); });
  out << "@problemName " << (problem_name.empty() ? std::string_view("resilin") : problem_name) << "\n"
      << "@timeStamps false\n"
      << "@univariate " << (ds.channels == 1 ? "true" : "false") << "\n"
      << "@dimensions " << ds.channels << "\n"
      << "@equalLength " << (equal ? "true" : "false") << "\n";
  if (equal && !ds.lengths.empty()) out << "@seriesLength " << ds.lengths.front() << "\n";
  out << "@classLabel " << (labelled ? "true" : "false");
  for (auto const& c : classes) out << ' ' << c;
  out << "\n@data\n";
  char buf[40];
  for (index_t b = 0; b < ds.size(); ++b) {
    series_view<T const> const x = ds.series(b);
    for (index_t c = 0; c < x.channels; ++c) {
      if (c > 0) out << ':';
      for (index_t i = 0; i < x.length; ++i) {
        int const n = std::snprintf(buf, sizeof buf, std::same_as<T, float> ? "%.9g" : "%.17g",
                                    static_cast<double>(x(i, c)));
        if (i > 0) out << ',';
        out.write(buf, n);
      }
    }
    if (labelled) out << ':' << ds.labels[static_cast<std::size_t>(b)];
    out << '\n';
  }
  if (!out) RESILIN_THROW(runtime_error("write_ts: the stream failed"));
}

}  // namespace resilin
