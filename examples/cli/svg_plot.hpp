#pragma once
// SVG plots of series groups: one panel per group, the members drawn faintly and the group's
// barycentre (or centroid) drawn on top. Plain SVG 1.1, no scripts, readable in any browser.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>
#include <resilin/core/error.hpp>
#include <resilin/apps/dataset.hpp>
#include <resilin/core/views.hpp>

namespace resilin_cli {
namespace r = resilin;

/// One panel: a title, the member series (faint) and the highlighted series (bold).
template <class T>
struct svg_panel {
  std::string title;
  std::vector<r::series_view<T const>> members;
  std::vector<r::series_view<T const>> highlighted;
};

namespace svg_detail {
/// The length of the well-formed UTF-8 sequence at s[i] of a character XML allows (2-4 bytes:
/// no overlong forms, surrogates or code points above U+10FFFF), or 0.
inline std::size_t utf8_sequence(std::string const& s, std::size_t i) {
  auto const byte = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  unsigned const b0 = byte(i);
  std::size_t const n = b0 >= 0xF0 && b0 <= 0xF4 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 && b0 < 0xE0 ? 2 : 0;
  if (n == 0 || b0 > 0xF4) return 0;
  unsigned long cp = b0 & (0xFFu >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3Fu);
  }
  unsigned long const least[5] = {0, 0, 0x80, 0x800, 0x10000};
  bool const ok = cp >= least[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) && cp != 0xFFFE && cp != 0xFFFF;
  return ok ? n : 0;
}

/// s as XML character data: the markup characters escaped; control bytes other than tab and
/// bytes outside well-formed UTF-8 (a Latin-1 label, say), which XML does not allow, as U+FFFD.
inline std::string escape(std::string const& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    auto const ch = static_cast<unsigned char>(s[i]);
    if (ch >= 0x80) {
      std::size_t const n = utf8_sequence(s, i);
      out += n > 0 ? s.substr(i, n) : std::string("\xEF\xBF\xBD");
      i += n > 0 ? n : 1;
      continue;
    }
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch < 0x20 && ch != '\t' ? std::string("\xEF\xBF\xBD") : std::string(1, static_cast<char>(ch));
    }
    ++i;
  }
  return out;
}

// Channel colours (Okabe-Ito palette, distinguishable with colour-vision deficiencies).
inline char const* channel_colour(r::index_t c) {
  static constexpr char const* palette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                            "#E69F00", "#56B4E9", "#F0E442", "#000000"};
  return palette[c % 8];
}

template <class T>
void polyline(std::string& out, r::series_view<T const> s, r::index_t channel, double x0,
              double y0, double w, double h, r::index_t max_len, double lo, double hi,
              char const* colour, double width, double opacity) {
  out += "<polyline fill=\"none\" stroke=\"";
  out += colour;
  char buf[96];
  std::snprintf(buf, sizeof buf, "\" stroke-width=\"%.2f\" stroke-opacity=\"%.2f\" points=\"",
                width, opacity);
  out += buf;
  double const span = hi > lo ? hi - lo : 1.0;
  double const denom = max_len > 1 ? static_cast<double>(max_len - 1) : 1.0;
  for (r::index_t t = 0; t < s.length; ++t) {
    double const v = static_cast<double>(s.row(t)[channel]);
    double const px = x0 + w * static_cast<double>(t) / denom;
    double const py = y0 + h * (1.0 - (v - lo) / span);
    std::snprintf(buf, sizeof buf, "%s%.1f,%.1f", t ? " " : "", px, py);
    out += buf;
  }
  out += "\"/>\n";
}
}  // namespace svg_detail

/// Writes the panels side by side (at most 4 per row) into path; throws on I/O failure.
template <class T>
void write_svg(std::string const& path, std::string const& title,
               std::vector<svg_panel<T>> const& panels) {
  using svg_detail::escape;
  r::detail::require(!panels.empty(), "nothing to plot into ", path);
  constexpr double panel_w = 320, panel_h = 220, margin = 36, title_h = 34;
  int const columns = static_cast<int>(std::min<std::size_t>(4, panels.size()));
  int const rows = static_cast<int>((panels.size() + static_cast<std::size_t>(columns) - 1) /
                                    static_cast<std::size_t>(columns));
  double const width = columns * (panel_w + margin) + margin;
  double const height = title_h + rows * (panel_h + margin) + margin / 2;

  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n",
                width, height, width, height);
  out += buf;
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  std::snprintf(buf, sizeof buf, "<text x=\"%.0f\" y=\"22\" font-size=\"16\">", margin);
  out += buf;
  out += escape(title) + "</text>\n";

  for (std::size_t p = 0; p < panels.size(); ++p) {
    auto const& panel = panels[p];
    double const x0 = margin + static_cast<double>(p % static_cast<std::size_t>(columns)) * (panel_w + margin);
    double const y0 = title_h + margin / 2 +
                      static_cast<double>(p / static_cast<std::size_t>(columns)) * (panel_h + margin);
    // One vertical scale per panel, from every series drawn in it.
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    r::index_t max_len = 1, channels = 1;
    auto extend = [&](r::series_view<T const> s) {
      max_len = std::max(max_len, s.length);
      channels = std::max(channels, s.channels);
      for (r::index_t k = 0; k < s.length * s.channels; ++k) {
        double const v = static_cast<double>(s.data[k]);
        if (std::isfinite(v)) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    };
    for (auto s : panel.members) extend(s);
    for (auto s : panel.highlighted) extend(s);
    if (!(lo <= hi)) lo = 0, hi = 1;
    double const pad = 0.05 * (hi > lo ? hi - lo : 1.0);
    lo -= pad;
    hi += pad;
    std::snprintf(buf, sizeof buf,
                  "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
                  "stroke=\"#bbbbbb\"/>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">",
                  x0, y0, panel_w, panel_h, x0, y0 - 6);
    out += buf;
    out += escape(panel.title) + "</text>\n";
    std::snprintf(buf, sizeof buf,
                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" fill=\"#777777\" "
                  "text-anchor=\"end\">%.3g</text>\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"9\" "
                  "fill=\"#777777\" text-anchor=\"end\">%.3g</text>\n",
                  x0 - 3, y0 + 9, hi, x0 - 3, y0 + panel_h, lo);
    out += buf;
    for (r::index_t c = 0; c < channels; ++c) {
      char const* colour = svg_detail::channel_colour(c);
      for (auto s : panel.members)
        svg_detail::polyline(out, s, c, x0, y0, panel_w, panel_h, max_len, lo, hi, colour, 0.8,
                             0.18);
      for (auto s : panel.highlighted)
        svg_detail::polyline(out, s, c, x0, y0, panel_w, panel_h, max_len, lo, hi, "#111111",
                             3.2, 0.9);
      for (auto s : panel.highlighted)
        svg_detail::polyline(out, s, c, x0, y0, panel_w, panel_h, max_len, lo, hi, colour, 2.0,
                             1.0);
    }
  }
  out += "</svg>\n";

  std::ofstream f(path, std::ios::binary);
  if (!f) RESILIN_THROW(r::runtime_error(r::detail::message("cannot write '", path, "'")));
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.close();
  if (!f) RESILIN_THROW(r::runtime_error(r::detail::message("cannot write '", path, "'")));
}

/// Panels for --svg: per class of `data`, its members faintly and centroids[k] on top.
template <class T>
std::vector<svg_panel<T>> class_panels(r::dataset<T> const& data,
                                       std::vector<std::string> const& classes,
                                       std::vector<r::series_view<T const>> const& centroids,
                                       std::string const& group = "class") {
  std::vector<svg_panel<T>> panels(classes.size());
  for (std::size_t k = 0; k < classes.size(); ++k) {
    panels[k].title = group + " " + classes[k];
    panels[k].highlighted.push_back(centroids[k]);
  }
  for (r::index_t i = 0; i < data.size(); ++i)
    for (std::size_t k = 0; k < classes.size(); ++k)
      if (data.labels[static_cast<std::size_t>(i)] == classes[k])
        panels[k].members.push_back(data.series(i));
  for (std::size_t k = 0; k < classes.size(); ++k)
    panels[k].title += " (" + std::to_string(panels[k].members.size()) + " series)";
  return panels;
}

}  // namespace resilin_cli
