#pragma once
// Shared by the learn tests: a padded batch that owns its values, random ragged batches, and
// two well-separated classes.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>
#include <host/helpers.hpp>
#include <resilin/apps/dataset.hpp>
#include <resilin/apps/synthetic.hpp>
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

/// Cylinders and upside-down funnels (CBF classes 1 and 3, the funnels negated): two classes
/// that no elastic measure confuses. Labels "cylinder" / "funnel".
inline resilin::dataset<double> two_classes(resilin::index_t per_class, resilin::index_t length,
                                            std::uint64_t seed) {
  auto const cbf = resilin::make_cbf<double>({.per_class = per_class, .length = length, .seed = seed});
  resilin::dataset<double> ds;
  for (resilin::index_t s = 0; s < cbf.size(); ++s) {
    auto const& label = cbf.labels[static_cast<std::size_t>(s)];
    if (label == "2") continue;
    auto const x = cbf.series(s);
    std::vector<double> v(x.data, x.data + x.size());
    if (label == "3")
      for (auto& e : v) e = -e;
    ds.push_back(label == "1" ? "cylinder" : "funnel", std::span<double const>(v));
  }
  return ds;
}

}  // namespace resilin_test
