#pragma once
// Host-side validation of every input: a typed resilin::invalid_argument whose message names
// the argument and the value. Nothing reaches a traversal unchecked.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <resilin/core/error.hpp>
#include <resilin/core/views.hpp>

namespace resilin::detail {

template <class T>
void check_series(series_view<T const> s, std::string_view name) {
  require(s.channels >= 1, name, ": channels must be >= 1, got ", s.channels);
  require(s.length >= 1, name, " is empty (length ", s.length, ")");
  require(s.data != nullptr, name, ": data is null for length ", s.length);
  for (index_t i = 0; i < s.length; ++i)
    for (index_t c = 0; c < s.channels; ++c)
      require(std::isfinite(s(i, c)), name, " contains a non-finite value (", s(i, c),
              ") at sample ", i, ", channel ", c);
}

template <class T>
void check_pair(series_view<T const> x, series_view<T const> y, std::string_view xn = "x",
                std::string_view yn = "y") {
  check_series(x, xn);
  check_series(y, yn);
  require(x.channels == y.channels, "channel mismatch: ", xn, " has ", x.channels, ", ", yn,
          " has ", y.channels);
}

template <class T>
void check_batch(batch_view<T const> b, std::string_view name) {
  require(b.batch >= 0, name, ": batch must be >= 0, got ", b.batch);
  require(b.channels >= 1, name, ": channels must be >= 1, got ", b.channels);
  require(b.max_length >= 1 || b.batch == 0, name, ": max_length must be >= 1, got ",
          b.max_length);
  require(b.data || b.batch == 0, name, ": data is null for a batch of ", b.batch, " series");
  for (index_t i = 0; i < b.batch; ++i) {
    index_t const len = b.length(i);
    require(len >= 1 && len <= b.max_length, name, ": length of series ", i, " must be in [1, ",
            b.max_length, "], got ", len);
  }
  for (index_t i = 0; i < b.batch; ++i) {
    series_view<T const> const s = b[i];
    for (index_t t = 0; t < s.length; ++t)
      for (index_t c = 0; c < s.channels; ++c)
        require(std::isfinite(s(t, c)), name, " contains a non-finite value (", s(t, c),
                ") in series ", i, " at sample ", t, ", channel ", c);
  }
}

template <class T, class U>
void check_same_shape(batch_view<T> g, batch_view<U const> ref, std::string_view gn,
                      std::string_view rn) {
  // an empty batch may have null data, as check_batch allows for the inputs
  require(g.data != nullptr || ref.batch == 0, gn, " is null");
  require(g.batch == ref.batch && g.max_length == ref.max_length && g.channels == ref.channels,
          gn, " must have the shape of ", rn, " (", ref.batch, ", ", ref.max_length, ", ",
          ref.channels, "), got (", g.batch, ", ", g.max_length, ", ", g.channels, ")");
}

/// A named range of memory that an entry point reads or writes (the overlap checks).
struct memory_region {
  void const* data = nullptr;
  std::size_t bytes = 0;
  std::string_view name;
  /// A batch's per-series lengths (none without them): read wherever the batch is an input, so
  /// an output over them is refused too (zeroed before the series were read, they made every
  /// value NaN on the device, inf on the host); an output's own are never written.
  void const* lengths = nullptr;
  std::size_t lengths_bytes = 0;
};
template <class T>
memory_region region(series_view<T> s, std::string_view name) noexcept {
  return {s.data, static_cast<std::size_t>(s.length * s.channels) * sizeof(T), name};
}
template <class T>
memory_region region(batch_view<T> b, std::string_view name) noexcept {
  return {b.data, static_cast<std::size_t>(b.batch * b.max_length * b.channels) * sizeof(T), name,
          b.lengths, b.lengths ? static_cast<std::size_t>(b.batch) * sizeof(index_t) : 0};
}
template <class T>
memory_region region(matrix_view<T> m, std::string_view name) noexcept {
  return {m.data, static_cast<std::size_t>(m.rows * m.cols) * sizeof(T), name};
}
template <class T>
memory_region region(std::span<T> s, std::string_view name) noexcept {
  return {s.data(), s.size_bytes(), name};
}
template <class T>
memory_region region(T const* p, index_t count, std::string_view name) noexcept {
  return {p, static_cast<std::size_t>(count) * sizeof(T), name};
}

/// Empty when every output is disjoint from every input and from the other outputs, else what
/// overlaps what: outputs are zeroed and written while the inputs are read, so an overlap gives
/// wrong results, not an error, unless it is refused. Addresses only (host or device memory).
inline std::string disjoint_error(std::initializer_list<memory_region> outputs,
                                  std::initializer_list<memory_region> inputs) {
  auto const overlap = [](void const* a, std::size_t a_bytes, void const* b, std::size_t b_bytes) {
    if (!a || !b || a_bytes == 0 || b_bytes == 0) return false;
    auto const pa = reinterpret_cast<std::uintptr_t>(a);
    auto const pb = reinterpret_cast<std::uintptr_t>(b);
    return pa < pb + b_bytes && pb < pa + a_bytes;
  };
  for (auto o = outputs.begin(); o != outputs.end(); ++o) {
    for (memory_region const& i : inputs) {
      bool const data = overlap(o->data, o->bytes, i.data, i.bytes);
      if (data || overlap(o->data, o->bytes, i.lengths, i.lengths_bytes))
        return message(o->name, " overlaps the input ", i.name, data ? "" : ".lengths",
                       " (outputs are written while the inputs are read: pass separate buffers)");
    }
    for (auto p = outputs.begin(); p != o; ++p)
      if (overlap(o->data, o->bytes, p->data, p->bytes))
        return message(o->name, " overlaps ", p->name, " (pass separate buffers)");
  }
  return {};
}

/// Throws resilin::invalid_argument with disjoint_error's message when it has one.
inline void check_disjoint(std::initializer_list<memory_region> outputs,
                           std::initializer_list<memory_region> inputs) {
  std::string const e = disjoint_error(outputs, inputs);
  require(e.empty(), e);
}

/// The overlap rule of the gradient entry points (value_and_grad, values_and_grads; host and
/// device): the gradients gx, gy and the values `out` apart from x, y, `upstream` and each other,
/// except gx = gy for y = x (the same memory), where one buffer receives the sum of both
/// gradients, the derivative of M(x, x). Unused regions are empty.
inline std::string gradients_overlap_error(memory_region x, memory_region y, memory_region gx,
                                           memory_region gy, memory_region out = {},
                                           memory_region upstream = {}) {
  auto const inputs = {x, y, upstream};
  if (gx.data == gy.data && x.data == y.data && x.bytes == y.bytes)
    return disjoint_error({out, gx}, inputs);
  return disjoint_error({out, gx, gy}, inputs);
}

/// The overlap rule of pairwise_grads (host and device): GX and out apart from X, Y (their
/// lengths included), weights and each other.
template <class T>
std::string pairwise_grads_overlap_error(batch_view<T> gx, batch_view<T const> X,
                                         batch_view<T const> Y, memory_region out,
                                         memory_region weights) {
  return disjoint_error({region(gx, "GX"), out}, {region(X, "X"), region(Y, "Y"), weights});
}

/// The arguments of pairwise_grads (host and device) beside X and Y: GX of X's shape, out and
/// weights (when given) of (|X|, |Y|).
template <class T>
void check_pairwise_grads_shapes(batch_view<T> gx, batch_view<T const> X, batch_view<T const> Y,
                                 matrix_view<T> out, matrix_view<T const> weights) {
  check_same_shape(gx, X, "GX", "X");
  require(!out.data || (out.rows == X.batch && out.cols == Y.batch), "out must be (", X.batch,
          ", ", Y.batch, "), got (", out.rows, ", ", out.cols, ")");
  require(!weights.data || (weights.rows == X.batch && weights.cols == Y.batch), "weights must be (",
          X.batch, ", ", Y.batch, "), got (", weights.rows, ", ", weights.cols, ")");
}

/// pairwise_grads on the host: finite weights, and outputs apart from the inputs and each other.
template <class T>
void check_pairwise_grads_inputs(batch_view<T> gx, batch_view<T const> X, batch_view<T const> Y,
                                 matrix_view<T> out, matrix_view<T const> weights) {
  for (index_t k = 0; weights.data && k < weights.rows * weights.cols; ++k)
    require(std::isfinite(weights.data[k]), "weights(", k / weights.cols, ", ", k % weights.cols,
            ") is not finite: ", weights.data[k]);
  std::string const e =
      pairwise_grads_overlap_error(gx, X, Y, region(out, "out"), region(weights, "weights"));
  require(e.empty(), e);
}

}  // namespace resilin::detail

namespace resilin {
/// A validated batch view over a flat buffer (batch, max_length, channels) with optional
/// per-series lengths; throws if the buffer or the lengths do not match the shape. The view
/// keeps pointers to both, which must outlive it.
template <class T>
batch_view<T> make_batch(std::span<T> data, index_t batch, index_t max_length,
                         index_t channels = 1, std::span<index_t const> lengths = {}) {
  detail::require(batch >= 0, "batch must be >= 0, got ", batch);
  detail::require(max_length >= 1, "max_length must be >= 1, got ", max_length);
  detail::require(channels >= 1, "channels must be >= 1, got ", channels);
  // batch * max_length * channels without signed overflow: it must equal data.size()
  auto const fits = [](index_t a, index_t b) {
    return b == 0 || a <= std::numeric_limits<index_t>::max() / b;
  };
  detail::require(fits(max_length, channels) && fits(batch, max_length * channels),
                  "batch * max_length * channels overflows: ", batch, " * ", max_length, " * ", channels);
  detail::require(static_cast<index_t>(data.size()) == batch * max_length * channels,
                  "data has ", data.size(), " values, expected batch * max_length * channels = ",
                  batch * max_length * channels);
  detail::require(lengths.empty() || static_cast<index_t>(lengths.size()) == batch,
                  "lengths has ", lengths.size(), " entries, expected batch = ", batch);
  for (std::size_t i = 0; i < lengths.size(); ++i)
    detail::require(lengths[i] >= 1 && lengths[i] <= max_length, "lengths[", i,
                    "] must be in [1, max_length = ", max_length, "], got ", lengths[i]);
  return {data.data(), batch, max_length, channels, lengths.empty() ? nullptr : lengths.data()};
}

/// Lengths in a temporary container (make_batch(x, B, L, C, std::vector<index_t>{...})) would
/// leave the view pointing at freed memory once the statement ends: refused at compile time.
template <class T, std::ranges::contiguous_range L>
  requires(!std::ranges::borrowed_range<L>)
batch_view<T> make_batch(std::span<T> data, index_t batch, index_t max_length, index_t channels,
                         L&& temporary_lengths) = delete;
}  // namespace resilin
