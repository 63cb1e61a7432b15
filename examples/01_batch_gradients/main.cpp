// A Soft-DTW loss over a ragged batch: per-pair lengths, no padding tricks, all cores, values
// and gradients with respect to both inputs (padding samples get exactly zero gradient).
#include <cmath>
#include <cstdio>
#include <vector>
#include <resilin/resilin.hpp>

int main() {
  constexpr long batch = 4, max_len = 64, channels = 3;
  std::vector<float> x(batch * max_len * channels), y(batch * max_len * channels);
  for (std::size_t k = 0; k < x.size(); ++k) {
    x[k] = std::sin(0.05f * static_cast<float>(k));
    y[k] = std::cos(0.07f * static_cast<float>(k));
  }
  std::vector<resilin::index_t> const len_x{64, 50, 33, 8}, len_y{60, 64, 20, 12};
  auto const X = resilin::make_batch(x, batch, max_len, channels, len_x);
  auto const Y = resilin::make_batch(y, batch, max_len, channels, len_y);

  std::vector<float> loss(batch), gx(x.size()), gy(y.size());
  auto const m = resilin::measures::soft_dtw_divergence(0.5f, resilin::band_spec::window(0.25));
  resilin::values_and_grads(resilin::host, m, X, Y, std::span<float>(loss),
                            resilin::make_batch(gx, batch, max_len, channels),
                            resilin::make_batch(gy, batch, max_len, channels));
  for (long b = 0; b < batch; ++b) {
    double norm = 0;
    for (long k = 0; k < max_len * channels; ++k) norm += std::pow(gx[b * max_len * channels + k], 2);
    std::printf("pair %ld (%ld x %ld): divergence %.6f, |dL/dx| %.6f\n", b, static_cast<long>(len_x[b]),
                static_cast<long>(len_y[b]), loss[b], std::sqrt(norm));
  }
  // padding of pair 3 (samples 8..63 of x) must have zero gradient
  for (long k = 8 * channels; k < max_len * channels; ++k)
    if (gx[3 * max_len * channels + k] != 0.0f) return 1;
  return 0;
}
