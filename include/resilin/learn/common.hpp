#pragma once
// What every barycentre method shares: the measure concept, input and weight validation, the
// barycentre length, linear resampling, and the two initialisations (Euclidean mean, medoid).
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <functional>
#include <limits>
#include <new>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>
#include <resilin/alignment.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/validate.hpp>
#include <resilin/core/views.hpp>
#include <resilin/learn/objective.hpp>
#include <resilin/learn/options.hpp>

namespace resilin::learn {

template <class M> inline constexpr bool is_measure_v = false;
template <class Cost, class Smooth>
inline constexpr bool is_measure_v<measure<Cost, Smooth>> = true;

/// A resilin::measure<Cost, Smooth> (any cost model, smoothing, band, divergence flag).
template <class M>
concept alignment_measure = is_measure_v<std::remove_cvref_t<M>>;

namespace detail {
using resilin::detail::require;

/// The caller's progress callbacks, wrapped so that reporting_allocation_failure passes on what
/// they throw untouched (a callback's std::length_error came back as "out of memory").
struct callback_guard {
  bool threw = false;
  template <class... Args>
  std::function<void(Args...)> wrap(std::function<void(Args...)> const& user) {
    if (!user) return {};
    return [this, &user](Args... args) {
      try {
        user(args...);
      } catch (...) {
        threw = true;
        throw;
      }
    };
  }
};

/// Runs f; an allocation failure of the library's own (a barycentre length or a batch beyond
/// memory) becomes resilin::runtime_error naming `what`, the library's error for limits that are
/// not the input's fault (it was std::bad_alloc). What a callback wrapped by `guard` threw passes.
template <class F>
decltype(auto) reporting_allocation_failure(char const* what, callback_guard const& guard, F&& f) {
  auto const failure = [what] {
    return resilin::runtime_error(resilin::detail::message(
        what, ": out of memory (the barycentre length, the series or the batch are too large)"));
  };
  try {
    return f();
  } catch (std::bad_alloc const&) {
    if (guard.threw) throw;
    RESILIN_THROW(failure());
  } catch (std::length_error const&) {  // a vector longer than its max_size()
    if (guard.threw) throw;
    RESILIN_THROW(failure());
  }
}

/// Checks a batch of series to average or cluster: at least one series, finite values.
template <class T>
void check_inputs(batch_view<T const> series, char const* what) {
  require(series.batch >= 1, what, ": the series set is empty (batch ", series.batch, ")");
  resilin::detail::check_batch(series, "series");
}

/// The weights normalised to sum 1; empty means uniform. Each must be finite and >= 0, and
/// their sum > 0. Weights whose sum overflows (three of 1e308) are divided by the largest first
/// (their sum was inf and every normalised weight 0).
template <class T>
std::vector<double> normalised_weights(std::span<T const> weights, index_t n) {
  std::vector<double> w(static_cast<std::size_t>(n), 1.0 / static_cast<double>(n));
  if (weights.empty()) return w;
  require(static_cast<index_t>(weights.size()) == n, "weights has ", weights.size(),
          " entries, expected one per series (", n, ")");
  double sum = 0, largest = 0;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    double const v = static_cast<double>(weights[k]);
    require(std::isfinite(v) && v >= 0, "weights[", k, "] must be finite and >= 0, got ", v);
    sum += v;
    largest = std::max(largest, v);
  }
  require(sum > 0, "weights must not all be zero");
  double const unit = std::isfinite(sum) ? 1.0 : largest;
  if (unit != 1.0) {
    sum = 0;
    for (std::size_t k = 0; k < weights.size(); ++k) sum += static_cast<double>(weights[k]) / unit;
  }
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<double>(weights[k]) / unit / sum;
  return w;
}

/// The barycentre length: the requested one, or the mean input length rounded (ties up).
template <class T>
index_t target_length(batch_view<T const> series, index_t requested) {
  require(requested >= 0, "barycenter length must be >= 0 (0: the mean length), got ", requested);
  require(requested <= barycenter_options::max_length, "barycenter length must be <= 2^40, got ",
          requested);
  index_t length = requested;
  if (length == 0) {
    double total = 0;
    for (index_t b = 0; b < series.batch; ++b) total += static_cast<double>(series.length(b));
    length = std::max<index_t>(1, static_cast<index_t>(std::floor(total / static_cast<double>(series.batch) + 0.5)));
  }
  // length * channels values are allocated and indexed: keep the product in range
  index_t const channels = std::max<index_t>(series.channels, 1);
  require(length <= barycenter_options::max_length / channels, "barycenter length times channels must be <= 2^40, got ",
          length, " x ", channels);
  return length;
}

/// The barycentre length of opt: opt.length, or the start's (opt.start) where that is given and
/// opt.length is 0, or the mean input length; checks the start's size and values against it.
template <class T>
index_t target_length(batch_view<T const> series, barycenter_options const& opt) {
  if (opt.start.empty()) return target_length(series, opt.length);
  index_t const channels = std::max<index_t>(series.channels, 1);
  auto const size = static_cast<index_t>(opt.start.size());
  require(size % channels == 0, "barycenter start has ", size, " values, not a multiple of the ",
          channels, " channels");
  index_t const length = target_length(series, opt.length == 0 ? size / channels : opt.length);
  require(length == size / channels, "barycenter start has ", size / channels,
          " samples, but the barycentre length is ", length);
  for (std::size_t k = 0; k < opt.start.size(); ++k)
    require(std::isfinite(opt.start[k]) && std::abs(opt.start[k]) <= static_cast<double>(std::numeric_limits<T>::max()),
            "barycenter start value ", k, " must be finite in the value type, got ", opt.start[k]);
  return length;
}

inline void check_objective(barycenter_objective o) {
  require(o == barycenter_objective::value || o == barycenter_objective::sharp,
          "objective must be value or sharp, got ", static_cast<int>(o));
}

inline void check_options(barycenter_options const& opt) {
  require(opt.max_iter >= 0, "max_iter must be >= 0, got ", opt.max_iter);
  require(opt.tolerance >= 0 && std::isfinite(opt.tolerance),
          "tolerance must be finite and >= 0, got ", opt.tolerance);
  require(opt.threads >= 0, "threads must be >= 0 (0 = all cores), got ", opt.threads);
  check_objective(opt.objective);
  require(opt.init == init_method::euclidean_mean || opt.init == init_method::medoid,
          "init must be euclidean_mean or medoid, got ", static_cast<int>(opt.init));
}

/// s resampled to `length` samples by linear interpolation; sample i sits at position
/// i (n - 1) / (length - 1) of s (the centre for length 1). Added, scaled by `weight`, to out.
template <class T>
void add_resampled(series_view<T const> s, index_t length, double weight, std::span<double> out) {
  index_t const n = s.length, c = s.channels;
  for (index_t i = 0; i < length; ++i) {
    double const pos = length == 1 ? 0.5 * static_cast<double>(n - 1)
                                   : static_cast<double>(i) * static_cast<double>(n - 1) /
                                         static_cast<double>(length - 1);
    index_t const lo = std::min<index_t>(static_cast<index_t>(std::floor(pos)), n - 1);
    index_t const hi = std::min<index_t>(lo + 1, n - 1);
    double const f = pos - static_cast<double>(lo);
    for (index_t ch = 0; ch < c; ++ch) {
      double const v = (1 - f) * static_cast<double>(s(lo, ch)) + f * static_cast<double>(s(hi, ch));
      out[static_cast<std::size_t>(i * c + ch)] += weight * v;
    }
  }
}

/// The weighted Euclidean mean of the series, each resampled to `length`: (length, channels).
template <class T>
std::vector<T> euclidean_mean(batch_view<T const> series, std::span<double const> w,
                              index_t length) {
  std::vector<double> acc(static_cast<std::size_t>(length * series.channels), 0.0);
  for (index_t b = 0; b < series.batch; ++b)
    add_resampled(series[b], length, w[static_cast<std::size_t>(b)], acc);
  return std::vector<T>(acc.begin(), acc.end());
}

/// The j minimising sum_k w_k d(j, k) (ties: the first) over the (n, n) dissimilarities that
/// rows(first, count, out) writes, rows [first, first + count) into out (count, n): a block of
/// rows at a time, about budget_bytes at most (the whole matrix took 3.2 GB for 20000 series
/// in double), each row's sum in the same order.
template <class T, class Rows>
index_t medoid_by_rows(index_t n, std::span<double const> w, Rows&& rows,
                       std::size_t budget_bytes = std::size_t(64) << 20) {
  auto const per_row = static_cast<std::size_t>(std::max<index_t>(n, 1)) * sizeof(T);
  index_t const block = std::clamp<index_t>(static_cast<index_t>(budget_bytes / per_row), 1, std::max<index_t>(n, 1));
  std::vector<T> d(static_cast<std::size_t>(block * n));
  index_t best = 0;
  double best_loss = 0;
  for (index_t first = 0; first < n; first += block) {
    index_t const count = std::min(block, n - first);
    rows(first, count, matrix_view<T>{d.data(), count, n});
    for (index_t r = 0; r < count; ++r) {
      double loss = 0;
      for (index_t k = 0; k < n; ++k)
        loss += w[static_cast<std::size_t>(k)] * static_cast<double>(d[static_cast<std::size_t>(r * n + k)]);
      if (first + r == 0 || loss < best_loss) { best = first + r; best_loss = loss; }
    }
  }
  return best;
}

/// The index of the medoid: argmin_j sum_k w_k M(x_j, x_k) (ties: the first).
template <alignment_measure Measure, class T>
index_t medoid_index(Measure const& m, batch_view<T const> series, std::span<double const> w,
                     int threads, barycenter_objective objective) {
  return medoid_by_rows<T>(series.batch, w, [&](index_t first, index_t count, matrix_view<T> out) {
    objective_pairwise(objective, threads, m, series.subbatch(first, count), series, out);
  });
}

/// The starting barycentre (length, channels): opt.start (checked by target_length(series,
/// opt)), else by opt.init the Euclidean mean, or the series medoid() names resampled to
/// `length` (check_options refuses other inits). initial_barycenter's and FastCDTW's starts.
template <class T, class Medoid>
std::vector<T> starting_barycenter(batch_view<T const> series, std::span<double const> w, index_t length,
                                   barycenter_options const& opt, Medoid&& medoid) {
  if (!opt.start.empty()) return std::vector<T>(opt.start.begin(), opt.start.end());
  if (opt.init == init_method::euclidean_mean) return euclidean_mean(series, w, length);
  std::vector<double> acc(static_cast<std::size_t>(length * series.channels), 0.0);
  add_resampled(series[medoid()], length, 1.0, acc);
  return std::vector<T>(acc.begin(), acc.end());
}

/// The starting barycentre of a measure's search (starting_barycenter; the medoid under m).
template <alignment_measure Measure, class T>
std::vector<T> initial_barycenter(Measure const& m, batch_view<T const> series,
                                  std::span<double const> w, index_t length,
                                  barycenter_options const& opt) {
  return starting_barycenter(series, w, length, opt,
                             [&] { return medoid_index(m, series, w, opt.threads, opt.objective); });
}

/// n copies of z as a padded batch (n, length, channels), for the batched alignment calls.
template <class T>
void replicate(std::span<T const> z, index_t n, std::vector<T>& out) {
  out.resize(static_cast<std::size_t>(n) * z.size());
  for (index_t k = 0; k < n; ++k)
    std::copy(z.begin(), z.end(), out.begin() + static_cast<std::ptrdiff_t>(k) * static_cast<std::ptrdiff_t>(z.size()));
}
}  // namespace detail

}  // namespace resilin::learn
