#pragma once
// Non-owning views of series and batches. Trivially copyable, identical under g++ and nvcc,
// so they pass to kernels by value. Layout is row-major (length, channels): x(i, c).
#include <type_traits>
#include <resilin/core/config.hpp>

namespace resilin {

/// One series: `length` samples of `channels` values each, sample i at data + i * channels.
template <class T>
struct series_view {
  using element_type = T;
  T* data = nullptr;
  index_t length = 0;
  index_t channels = 1;

  RESILIN_HD T* row(index_t i) const noexcept { return data + i * channels; }
  RESILIN_HD T& operator()(index_t i, index_t c) const noexcept { return data[i * channels + c]; }
  RESILIN_HD index_t size() const noexcept { return length * channels; }
};

/// A batch (batch, max_length, channels), row-major, with optional per-series lengths
/// (ragged batches without padding tricks: series b uses its first lengths[b] samples).
template <class T>
struct batch_view {
  using element_type = T;
  T* data = nullptr;
  index_t batch = 0;
  index_t max_length = 0;
  index_t channels = 1;
  index_t const* lengths = nullptr;  // (batch) or nullptr: every series has max_length samples

  RESILIN_HD index_t length(index_t b) const noexcept {
    return lengths ? lengths[b] : max_length;
  }
  RESILIN_HD series_view<T> operator[](index_t b) const noexcept {
    return {data + b * max_length * channels, length(b), channels};
  }
  /// Series [first, first + count) as a batch of their own (the same layout and lengths).
  RESILIN_HD batch_view subbatch(index_t first, index_t count) const noexcept {
    return {data + first * max_length * channels, count, max_length, channels, lengths ? lengths + first : nullptr};
  }
};

/// A dense row-major matrix view (rows, cols), e.g. a pairwise distance matrix or E.
template <class T>
struct matrix_view {
  T* data = nullptr;
  index_t rows = 0;
  index_t cols = 0;
  RESILIN_HD T& operator()(index_t r, index_t c) const noexcept { return data[r * cols + c]; }
  /// The read-only view of the same matrix: a mutable view goes wherever a read-only one is taken
  /// (pairwise_grads' weights, say).
  RESILIN_HD constexpr operator matrix_view<T const>() const noexcept
    requires(!std::is_const_v<T>)
  {
    return {data, rows, cols};
  }
};

/// The read-only view of the same data.
template <class T>
RESILIN_HD constexpr series_view<T const> as_const(series_view<T> v) noexcept {
  return {v.data, v.length, v.channels};
}
template <class T>
RESILIN_HD constexpr batch_view<T const> as_const(batch_view<T> v) noexcept {
  return {v.data, v.batch, v.max_length, v.channels, v.lengths};
}

template <class V>
using value_of = std::remove_const_t<typename V::element_type>;

template <class V> inline constexpr bool is_series_view_v = false;
template <class T> inline constexpr bool is_series_view_v<series_view<T>> = true;
template <class V> inline constexpr bool is_batch_view_v = false;
template <class T> inline constexpr bool is_batch_view_v<batch_view<T>> = true;

/// series_view<T> or series_view<T const> of float or double.
template <class V>
concept series_like = is_series_view_v<V> && std::is_floating_point_v<value_of<V>>;
/// batch_view<T> or batch_view<T const> of float or double.
template <class V>
concept batch_like = is_batch_view_v<V> && std::is_floating_point_v<value_of<V>>;

template <class T>
constexpr series_view<T> make_series(T* data, index_t length, index_t channels = 1) noexcept {
  return {data, length, channels};
}

static_assert(std::is_trivially_copyable_v<series_view<float const>>);
static_assert(std::is_trivially_copyable_v<batch_view<double>>);

}  // namespace resilin
