#pragma once
// fast-cdtw's pairwise calls as the paired batches resilin::fcdtw fits (host and GPU paths of
// the tool): pair p = i * |B| + j warps A_i (X, the warped side) onto B_j's time axis (Y).
#include <algorithm>
#include <vector>
#include <resilin/core/views.hpp>
#include <resilin/fcdtw/solver.hpp>
#include <resilin/learn/nearest_centroid.hpp>
#include "metric.hpp"

namespace resilin_cli {

inline r::fcdtw::fit_options fit_options_of(fast_cdtw_metric const& m, int threads) {
  r::fcdtw::fit_options o;
  o.steps = m.steps;
  o.lr = m.lr;
  o.init = m.grid_init ? r::fcdtw::warp_init::grid : r::fcdtw::warp_init::identity;
  o.threads = threads;
  return o;
}

template <class T>
using owned_batch = r::learn::detail::owned_batch<T>;

template <class T>
struct paired_batches {
  owned_batch<T> x, y;  // X[p - first] = A_i (warped), Y[p - first] = B_j (axis)
};

/// The pairs [first, last) of A x B as paired batches.
template <class T>
paired_batches<T> expand_pairs(r::batch_view<T const> a, r::batch_view<T const> b, index_t first,
                               index_t last) {
  index_t const count = last - first;
  auto const padded = [&](r::batch_view<T const> s) {
    return owned_batch<T>{std::vector<T>(static_cast<std::size_t>(count * s.max_length * s.channels), T(0)),
                          std::vector<index_t>(static_cast<std::size_t>(count), 0), s.max_length, s.channels};
  };
  paired_batches<T> out{padded(a), padded(b)};
  auto const set = [](owned_batch<T>& o, index_t k, r::series_view<T const> s) {
    std::copy(s.data, s.data + s.size(), o.values.begin() + k * o.max_length * o.channels);
    o.lengths[static_cast<std::size_t>(k)] = s.length;
  };
  for (index_t p = first; p < last; ++p) {
    set(out.x, p - first, a[p / b.batch]);
    set(out.y, p - first, b[p % b.batch]);
  }
  return out;
}

/// Pairs of A x B per expand_pairs() call such that its four padded copies (x, y and their
/// gradients) take about 64 MiB, at least one pair.
template <class T>
index_t pair_block(r::batch_view<T const> a, r::batch_view<T const> b) {
  std::size_t const per_pair = 2 * sizeof(T) * static_cast<std::size_t>(a.max_length * a.channels + b.max_length * b.channels);
  return std::max<index_t>(1, static_cast<index_t>((std::size_t(64) << 20) / per_pair));
}

template <class T>
void zero_gradients(r::batch_view<T> g) {
  std::fill(g.data, g.data + g.batch * g.max_length * g.channels, T(0));
}

/// g[i] += dD/dA_i of the pairs [first, first + gx.batch), from their X gradients gx, in pair
/// order (cols = |B|).
template <class T>
void add_row_gradients(r::batch_view<T const> gx, index_t first, index_t cols, r::batch_view<T> g) {
  for (index_t k = 0; k < gx.batch; ++k) {
    r::series_view<T> const gi = g[(first + k) / cols];
    T const* const src = gx.data + k * gx.max_length * gx.channels;
    for (index_t e = 0; e < gi.size(); ++e) gi.data[e] += src[e];
  }
}

}  // namespace resilin_cli
