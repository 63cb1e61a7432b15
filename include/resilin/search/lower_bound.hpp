#pragma once
// A lower bound of hard DTW for exact nearest-neighbour search: LB_Keogh (Keogh &
// Ratanamahatana, 2005) under the library's band, for any pair of lengths.
//
// Every warping path visits each row j of y at least once, at a column i inside the band's span
// of that row, and distinct rows are distinct cells of the path, whose costs are >= 0. So
//     DTW(x, y) >= sum_j min_{i in span(j)} delta(x_i, y_j) >= sum_j delta(y_j, box_j),
// where box_j = [L_j, U_j] is x's envelope over span(j) (per channel, the minimum and maximum)
// and delta(y, box) is the point distance from y to the nearest point of the box. The path
// starts at (0, 0) and ends at (n-1, m-1): rows 0 and m-1 use those cells' exact costs. A sum
// of univariate DTWs (independent channels) is bounded the same way, channel by channel.
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>
#include <resilin/core/band.hpp>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/views.hpp>
#include <resilin/cost/dtw.hpp>
#include <resilin/smoothing/hard_min.hpp>

namespace resilin {

/// The point distances whose delta(y, box) above bounds delta(x_i, y) for every x_i in the box:
/// sums over channels of a term that grows with |a_c - b_c| and is 0 at 0.
template <class D>
inline constexpr bool keogh_distance_v = std::is_same_v<D, squared_euclidean> ||
                                         std::is_same_v<D, half_squared_euclidean> ||
                                         std::is_same_v<D, l1_distance>;

/// Measures with the LB_Keogh bound: hard DTW (plain, banded, independent channels) with one of
/// the library's point distances. Not the divergence, not soft measures (a soft minimum is
/// below every path's cost).
template <class M>
inline constexpr bool has_keogh_bound_v = false;
template <class D>
inline constexpr bool has_keogh_bound_v<measure<dtw_cost<D>, hard_min>> = keogh_distance_v<D>;

/// x's envelope over the band's span of each row of a series of `rows` samples: per channel,
/// the minimum and maximum of x over span(j). Reusable: build() keeps its buffers.
template <class T>
class keogh_envelope {
 public:
  /// O((n + rows) channels): monotone queues over the spans, whose ends never decrease in j.
  /// Throws resilin::invalid_argument for an empty x or rows < 1.
  void build(band_spec const& band, series_view<T const> x, index_t rows) {
    detail::require(x.length >= 1 && x.data != nullptr && x.channels >= 1 && rows >= 1,
                    "keogh_envelope::build: needs a non-empty series and rows >= 1, got length ", x.length,
                    " and rows ", rows);
    n_ = x.length;
    rows_ = rows;
    channels_ = x.channels;
    auto const size = static_cast<std::size_t>(rows * channels_);
    lower_.resize(size);
    upper_.resize(size);
    queue_.resize(static_cast<std::size_t>(n_));
    auto const g = band.geometry(rows, n_);
    for (index_t c = 0; c < channels_; ++c) {
      sweep(g, x, c, upper_, [](T a, T b) { return a >= b; });
      sweep(g, x, c, lower_, [](T a, T b) { return a <= b; });
    }
  }

  T lower(index_t j, index_t c) const noexcept { return lower_[static_cast<std::size_t>(j * channels_ + c)]; }
  T upper(index_t j, index_t c) const noexcept { return upper_[static_cast<std::size_t>(j * channels_ + c)]; }
  /// (rows, channels), row-major: the layout of a series of `rows` samples
  T const* lower_data() const noexcept { return lower_.data(); }
  T const* upper_data() const noexcept { return upper_.data(); }
  /// What the envelope was built for: the rows (y's length), x's length and channels.
  index_t rows() const noexcept { return rows_; }
  index_t length() const noexcept { return n_; }
  index_t channels() const noexcept { return channels_; }
  /// Frees build()'s scratch (n indices), for envelopes kept after building (one per reference:
  /// it was 8 bytes per reference sample, twice a float reference set, beside the bounds).
  void release_scratch() noexcept { std::vector<index_t>().swap(queue_); }

 private:
  /// out(j, c) = the extreme of x(i, c) over span(j), where keeps(a, b) says a dominates b.
  template <class Keeps>
  void sweep(band_geometry const& g, series_view<T const> x, index_t c, std::vector<T>& out,
             Keeps keeps) {
    std::size_t head = 0, tail = 0;  // queue_[head, tail): indices, their values dominated in order
    index_t next = 0;                // the first index of x not yet queued
    for (index_t j = 0; j < rows_; ++j) {
      index_range const span = g.row(j);
      for (; next <= span.hi; ++next) {
        while (tail > head && keeps(x(next, c), x(queue_[tail - 1], c))) --tail;
        queue_[tail++] = next;
      }
      while (queue_[head] < span.lo) ++head;
      out[static_cast<std::size_t>(j * channels_ + c)] = x(queue_[head], c);
    }
  }

  index_t n_ = 0, rows_ = 0, channels_ = 1;
  std::vector<T> lower_, upper_;
  std::vector<index_t> queue_;
};

/// LB_Keogh(x, y) <= DTW(x, y) in exact arithmetic, from x's envelope over y's rows (built for
/// y.length rows and the measure's band). O(m channels), in eight independent partial sums (a
/// vectorisable loop; the order of a bound's sum, and the fused first and last terms, differ from
/// the DTW's own rounding: rounding_safe covers both, also for subnormal costs).
template <class D, class T>
T keogh_bound(keogh_envelope<T> const& env, series_view<T const> x, series_view<T const> y) {
  index_t const m = y.length, n = x.length, d = y.channels;
  // an envelope of other sizes read out of bounds, or bounded another series (a stale one gave
  // 375 for a DTW of 0)
  detail::require(env.rows() == m && env.length() == n && env.channels() == d && x.channels == d && m >= 1,
                  "keogh_bound: the envelope was built for ", env.rows(), " rows of a series of ",
                  env.length(), " samples and ", env.channels(), " channels; y has ", m, " samples, x ", n,
                  ", channels ", d, " and ", x.channels);
  T const first = D::value(x.row(0), y.row(0), d);
  T const last = D::value(x.row(n - 1), y.row(m - 1), d);
  if (m == 1) return std::max(first, last);
  // rows 1 .. m-2, every channel: y's values and the envelope share the (row, channel) layout
  T const* const v = y.data;
  T const* const lo = env.lower_data();
  T const* const hi = env.upper_data();
  auto outside = [&](index_t k) {  // y's distance to [lo, hi] along one channel (one side is 0)
    return std::max(v[k] - hi[k], T(0)) + std::min(v[k] - lo[k], T(0));
  };
  constexpr int lanes = 8;
  T partial[lanes] = {};
  index_t k = d;
  index_t const stop = (m - 1) * d;
  for (; k + lanes <= stop; k += lanes)
    for (int l = 0; l < lanes; ++l) partial[l] += D::term(outside(k + l));
  T sum = first + last;
  for (; k < stop; ++k) sum += D::term(outside(k));
  for (T p : partial) sum += p;
  return sum;
}

/// The bound made safe for rounding: scaled down by twice the relative error that the computed
/// bound (a sum of m channels + 2 non-negative terms) and the computed DTW (a path of at most
/// n + m cells of `channels` terms each) can carry, so that it stays below the computed DTW; and
/// lowered by what underflow can lose or gain besides (each subtraction, product and sum of
/// either, at most half the smallest subnormal), which no relative margin covers once the costs
/// are subnormal (there the bound's first and last terms, fused, exceeded the DTW's cells). A
/// bound that overflowed counts as the largest finite value: its sum, in another order than the
/// DTW's, can round to inf where the DTW rounds to a finite value (no relative margin lowers
/// inf, and such a bound pruned the true nearest neighbour).
template <class T>
T rounding_safe(T bound, index_t n, index_t m, index_t channels) noexcept {
  T const slack = T(2) * static_cast<T>(m * channels + n + m + channels + 4) *
                  std::numeric_limits<T>::epsilon();
  if (!(slack < T(1))) return T(0);
  bound = std::min(bound, std::numeric_limits<T>::max());
  T const operations = T(3) * static_cast<T>((n + 2 * m) * (channels + 1) + 4);
  T const underflow = operations * std::numeric_limits<T>::denorm_min();
  return std::max(bound * (T(1) - slack) - underflow, T(0));
}

}  // namespace resilin
