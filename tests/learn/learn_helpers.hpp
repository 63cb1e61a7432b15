#pragma once
// Shared by the learn tests: a padded batch that owns its values, and random ragged batches.
#include <algorithm>
#include <cstdint>
#include <vector>
#include <host/helpers.hpp>
#include <resilin/core/views.hpp>

namespace resilin_test {

/// A padded batch that owns its values.
template <class T>
struct owned_batch {
  std::vector<T> values;
  std::vector<resilin::index_t> lengths;
  resilin::index_t max_length = 0, channels = 1;
  resilin::batch_view<T const> view() const {
    return {values.data(), static_cast<resilin::index_t>(lengths.size()), max_length, channels,
            lengths.data()};
  }
};

/// Series of the given lengths with values uniform in [-2, 2] (series k from seed + k).
template <class T>
owned_batch<T> random_batch(std::vector<resilin::index_t> lengths, resilin::index_t channels,
                            std::uint64_t seed) {
  owned_batch<T> b;
  b.channels = channels;
  for (auto l : lengths) b.max_length = std::max(b.max_length, l);
  b.values.assign(lengths.size() * static_cast<std::size_t>(b.max_length * channels), T(0));
  for (std::size_t k = 0; k < lengths.size(); ++k) {
    auto v = random_values<T>(static_cast<std::size_t>(lengths[k] * channels), seed + k, -2, 2);
    std::copy(v.begin(), v.end(),
              b.values.begin() + static_cast<std::ptrdiff_t>(k * b.max_length * channels));
  }
  b.lengths = std::move(lengths);
  return b;
}

}  // namespace resilin_test
