#pragma once
// An independent-channels measure on a batch (the sum over channels of one-channel recursions,
// pair.hpp: independent_channels_value, sum_over_channels) as a batch of its one-channel units:
// unit (k, c) is channel c of pair k, copied to contiguous series, so that the units of short
// pairs run in lock-step groups as univariate pairs do. Each pair's value is then the sum of
// its units' values in channel order from 0, and its gradient column c their unit's gradient
// added to zero: value() and value_and_grad()'s bits.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>
#include <resilin/backend/host/lockstep_groups.hpp>
#include <resilin/backend/host/pair.hpp>
#include <resilin/backend/host/simd_abi.hpp>
#include <resilin/core/measure.hpp>
#include <resilin/core/views.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

/// Samples a chunk of units copies at most (x and y; as many again for their gradients), 16 MiB
/// of double beside the batch's own data for any batch size, unless one pair has more.
inline constexpr std::size_t channel_unit_samples = std::size_t(1) << 21;

/// Whether a pair of measure m runs as channel units: an independent-channels measure of
/// several channels, no divergence (whose self terms the groups do not form), and a one-channel
/// shape that lock-step groups take (lockstep_shape_fits); `training`: not S(x, x), whose
/// gradients may share one buffer (sum_over_channels keeps it one).
template <class T, class Cost, class Smooth>
bool runs_channel_units(measure<Cost, Smooth> const& m, series_view<T const> x, series_view<T const> y,
                        bool training) {
  return m.independent_channels && !m.divergence && x.channels > 1 &&
         lockstep_shape_fits<T>(m.single_channel(), x.length, y.length, 1, training) &&
         !(training && x.data == y.data);
}

/// One chunk of a batch's pairs: those that run as channel units (split) with their units'
/// copies, and the others (whole), which run as they are.
template <class T>
class channel_units {
 public:
  /// Takes the pairs from `first` on (of count; pair_at(k) gives (x_k, y_k)) until the units'
  /// copies reach channel_unit_samples or the chunk batch_plan_pairs pairs or units; returns the
  /// first pair not taken. `training`: with zeroed gradient buffers.
  template <class PairAt, class Splits>
  index_t gather(index_t first, index_t count, PairAt&& pair_at, Splits&& splits, bool training) {
    split_.clear();
    whole_.clear();
    units_.clear();
    std::size_t samples = 0;
    index_t k = first;
    for (; k < count && k - first < batch_plan_pairs; ++k) {
      auto const [x, y] = pair_at(k);
      if (!splits(x, y)) {
        whole_.push_back(k);
        continue;
      }
      auto const need = static_cast<std::size_t>(x.channels * (x.length + y.length));
      if (!split_.empty() && (samples + need > channel_unit_samples ||
                              static_cast<index_t>(units_.size()) + x.channels > batch_plan_pairs))
        break;
      split_.push_back({k, static_cast<index_t>(units_.size()), x.channels});
      for (index_t c = 0; c < x.channels; ++c) {
        units_.push_back({samples, k, x.length, y.length});
        samples += static_cast<std::size_t>(x.length + y.length);
      }
    }
    samples_.resize(samples);
    for (split_record const& s : split_) {
      auto const [x, y] = pair_at(s.pair);
      for (index_t c = 0; c < s.channels; ++c) {
        unit_record const& u = units_[static_cast<std::size_t>(s.first_unit + c)];
        copy_channel(x, c, samples_.data() + u.offset);
        copy_channel(y, c, samples_.data() + u.offset + static_cast<std::size_t>(u.n));
      }
    }
    if (training) grads_.assign(samples, T(0));
    values_.resize(units_.size());
    return k;
  }

  /// Copied samples from which the fold of the split pairs (split_value, add_split_gradients)
  /// runs on several threads.
  static constexpr std::size_t parallel_fold_samples = std::size_t(1) << 15;

  index_t units() const noexcept { return static_cast<index_t>(units_.size()); }
  std::size_t samples() const noexcept { return samples_.size(); }
  std::vector<index_t> const& whole() const noexcept { return whole_; }

  /// Unit u's one-channel series (x_c, y_c).
  std::pair<series_view<T const>, series_view<T const>> series(index_t u) const noexcept {
    unit_record const& s = units_[static_cast<std::size_t>(u)];
    T const* const x = samples_.data() + s.offset;
    return {{x, s.n, 1}, {x + s.n, s.m, 1}};
  }
  /// Unit u's gradient buffers (zeroed by gather), as series() lays them out.
  std::pair<series_view<T>, series_view<T>> gradients(index_t u) noexcept {
    unit_record const& s = units_[static_cast<std::size_t>(u)];
    T* const g = grads_.data() + s.offset;
    return {{g, s.n, 1}, {g + s.n, s.m, 1}};
  }
  T& value(index_t u) noexcept { return values_[static_cast<std::size_t>(u)]; }
  /// The pair unit u belongs to.
  index_t pair_of(index_t u) const noexcept { return units_[static_cast<std::size_t>(u)].pair; }

  /// For the split pair s of the chunk (s < split_pairs()): its index in the batch, and its value,
  /// the sum of its units' values in channel order from 0 (independent_channels_value).
  index_t split_pairs() const noexcept { return static_cast<index_t>(split_.size()); }
  index_t split_pair(index_t s) const noexcept { return split_[static_cast<std::size_t>(s)].pair; }
  T split_value(index_t s) const noexcept {
    split_record const& p = split_[static_cast<std::size_t>(s)];
    T sum = T(0);
    for (index_t c = 0; c < p.channels; ++c) sum += values_[static_cast<std::size_t>(p.first_unit + c)];
    return sum;
  }
  /// Adds split pair s's units' gradients to column c of gx and gy (sum_over_channels).
  void add_split_gradients(index_t s, series_view<T> gx, series_view<T> gy) const noexcept {
    split_record const& p = split_[static_cast<std::size_t>(s)];
    for (index_t c = 0; c < p.channels; ++c) {
      unit_record const& u = units_[static_cast<std::size_t>(p.first_unit + c)];
      T const* const g = grads_.data() + u.offset;
      for (index_t i = 0; i < u.n; ++i) gx(i, c) += g[i];
      for (index_t j = 0; j < u.m; ++j) gy(j, c) += g[u.n + j];
    }
  }

 private:
  struct split_record {
    index_t pair, first_unit, channels;
  };
  struct unit_record {
    std::size_t offset;  // x_c at offset, y_c after it; its gradients at the same places of grads_
    index_t pair, n, m;
  };
  std::vector<split_record> split_;
  std::vector<index_t> whole_;
  std::vector<unit_record> units_;
  std::vector<T> samples_, grads_, values_;
};

}  // namespace resilin::host_detail
