#pragma once
// Small helpers shared by the host tests: seeded random series, central differences, and
// comparison utilities. Header only; included after <support/catch.hpp>.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>
#include <support/reference.hpp>
#include <resilin/alignment.hpp>

namespace resilin_test {

/// True in a -fsanitize=address/undefined build, where the heaviest checks are trimmed.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
inline constexpr bool sanitized = true;
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
inline constexpr bool sanitized = true;
#  else
inline constexpr bool sanitized = false;
#  endif
#else
inline constexpr bool sanitized = false;
#endif

/// The cases of a heavy check: all of them, or the last `keep` in the sanitizer build (-O0 under
/// ASan and UBSan, which is there for memory and undefined behaviour, not for more cases; the
/// main build runs them all).
template <class T>
std::vector<T> unless_sanitized(std::vector<T> all, std::size_t keep = 1) {
  if (sanitized && all.size() > keep) all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(keep));
  return all;
}

/// n values uniform in [lo, hi), reproducible from the seed.
template <class T = double>
std::vector<T> random_values(std::size_t n, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<T> v(n);
  for (auto& e : v) e = static_cast<T>(u(gen));
  return v;
}

/// A converted copy (e.g. double -> float).
template <class T, class U>
std::vector<T> cast(std::vector<U> const& v) {
  std::vector<T> r(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) r[k] = static_cast<T>(v[k]);
  return r;
}

/// Central differences of f at p: (f(p + h e_k) - f(p - h e_k)) / 2h, h = eps * max(1, |p_k|).
inline std::vector<double> central_differences(std::function<double(std::vector<double> const&)> f,
                                               std::vector<double> p, double eps = 1e-5) {
  std::vector<double> g(p.size());
  for (std::size_t k = 0; k < p.size(); ++k) {
    double const v = p[k];
    double const h = eps * std::max(1.0, std::abs(v));
    p[k] = v + h;
    double const fp = f(p);
    p[k] = v - h;
    double const fm = f(p);
    p[k] = v;
    g[k] = (fp - fm) / (2 * h);
  }
  return g;
}

/// Whether the value of the value-only path (for soft-DTW: the exponential-domain traversal)
/// and of the gradient path (log domain) agree: the same quantity, computed two ways, so equal
/// to a few ulp per cell rather than bitwise.
template <class T>
bool values_agree(T a, T b) {
  double const tol = sizeof(T) == 8 ? 1e-12 : 2e-5;
  double const scale = std::max({1.0, std::abs(double(a)), std::abs(double(b))});
  return std::abs(double(a) - double(b)) <= tol * scale;
}

/// max_k |a_k - b_k| / max(1, |b_k|) (a relative error that is absolute near zero).
template <class A, class B>
double max_rel_diff(A const& a, B const& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    double const d = std::abs(double(a[k]) - double(b[k])) / std::max(1.0, std::abs(double(b[k])));
    if (!(d <= worst)) worst = d;  // NaN propagates as a failure
  }
  return worst;
}

template <class A, class B>
double max_abs_diff(A const& a, B const& b) {
  double worst = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    double const d = std::abs(double(a[k]) - double(b[k]));
    if (!(d <= worst)) worst = d;
  }
  return worst;
}

/// Bitwise equality of two ranges of floating-point values.
template <class A, class B>
bool bitwise_equal(A const& a, B const& b) {
  if (a.size() != b.size()) return false;
  if (a.size() == 0) return true;  // empty vectors may hold null data: no memcmp on null
  using T = std::remove_cvref_t<decltype(a[0])>;
  return std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
bool bits_equal(T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; }

template <class A>
bool all_finite(A const& a) {
  for (auto v : a)
    if (!std::isfinite(v)) return false;
  return true;
}

/// Runs f and returns the message of the resilin::invalid_argument it throws, or a marker
/// ("<no exception>", "<wrong type: ...>") that no expectation matches.
template <class Error, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (Error const& e) {
    return e.what();
  } catch (std::exception const& e) {
    return std::string("<wrong type: ") + e.what() + ">";
  } catch (...) {
    return "<unknown exception>";
  }
  return "<no exception>";
}

/// The reference mask (support/reference.hpp) of a band_spec on an (n, m) problem: Sakoe-Chiba
/// from its radius, Itakura from its slope.
inline resilin_test::reference::mask band_mask(resilin::band_spec const& band, resilin::index_t n, resilin::index_t m) {
  if (band.type() == resilin::band_spec::kind::itakura)
    return resilin_test::reference::itakura(n, m, band.itakura_slope_scaled(), resilin::itakura_slope_scale);
  return resilin_test::reference::sakoe_chiba(n, m, band.radius_for(n, m));
}

/// A ragged batch with its storage: `count` series of length in [1, max_length].
template <class T>
struct ragged {
  resilin::index_t count, max_length, channels;
  std::vector<resilin::index_t> lengths;
  std::vector<T> data;

  ragged(resilin::index_t b, resilin::index_t L, resilin::index_t d, std::uint64_t seed, bool full = false)
      : count(b), max_length(L), channels(d) {
    auto const u = random_values(static_cast<std::size_t>(b), seed * 7 + 1, 0, 1);
    for (resilin::index_t k = 0; k < b; ++k)
      lengths.push_back(full ? L : 1 + static_cast<resilin::index_t>(u[static_cast<std::size_t>(k)] * double(L)) % L);
    if (!full && b > 1) lengths[1] = L;  // at least one full-length series
    data = cast<T>(random_values(static_cast<std::size_t>(b * L * d), seed, -1, 1));
    for (resilin::index_t k = 0; k < b; ++k)  // padding: values that would change any result
      for (resilin::index_t t = lengths[static_cast<std::size_t>(k)]; t < L; ++t)
        for (resilin::index_t c = 0; c < d; ++c) data[static_cast<std::size_t>((k * L + t) * d + c)] = T(1e3);
  }
  resilin::batch_view<T const> view() const {
    return resilin::make_batch(std::span<T const>(data), count, max_length, channels,
                               std::span<resilin::index_t const>(lengths));
  }
  /// Series `to` becomes a copy of series `from` (its length and values): a planted tie.
  void copy(resilin::index_t from, resilin::index_t to) {
    lengths[static_cast<std::size_t>(to)] = lengths[static_cast<std::size_t>(from)];
    std::copy_n(data.begin() + from * max_length * channels, max_length * channels,
                data.begin() + to * max_length * channels);
  }
  std::vector<T> series(resilin::index_t k) const {
    auto const b = data.begin() + k * max_length * channels;
    return {b, b + lengths[static_cast<std::size_t>(k)] * channels};
  }
};

}  // namespace resilin_test

#if RESILIN_CATCH_V3
#  define RESILIN_CONTAINS(s) Catch::Matchers::ContainsSubstring(s)
#else
#  define RESILIN_CONTAINS(s) Catch::Matchers::Contains(s)
#endif
