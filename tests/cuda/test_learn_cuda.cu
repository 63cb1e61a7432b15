// L-BFGS barycentres with the gradients on the GPU (learn/cuda.cuh, issue 7 item 2) against the
// host: the summed loss and its gradient at a fixed z (1e-12 relative in double, 1e-5 in
// float), whole barycentres (loss within 1e-6 relative), run-to-run bitwise determinism, ragged
// series and several channels. Exits 77 (skipped) without a GPU (support/gpu_main.cpp).
#include <cmath>
#include <random>
#include <span>
#include <vector>
#include <support/catch.hpp>
#include <resilin/learn/cuda.cuh>
#include <resilin/learn/learn.hpp>

namespace r = resilin;
namespace rl = resilin::learn;

namespace {
template <class T>
struct ragged {
  r::index_t batch, max_length, channels;
  std::vector<r::index_t> lengths;
  std::vector<T> data;
  r::batch_view<T const> view() const { return {data.data(), batch, max_length, channels, lengths.data()}; }
};

template <class T>
ragged<T> random_ragged(r::index_t b, r::index_t L, r::index_t d, unsigned seed) {
  std::mt19937_64 g(seed);
  std::uniform_int_distribution<r::index_t> len(L / 2, L);
  std::normal_distribution<double> nd;
  ragged<T> s{b, L, d, std::vector<r::index_t>(static_cast<std::size_t>(b)),
              std::vector<T>(static_cast<std::size_t>(b * L * d), T(0))};
  for (r::index_t k = 0; k < b; ++k) {
    s.lengths[static_cast<std::size_t>(k)] = len(g);
    for (r::index_t i = 0; i < s.lengths[static_cast<std::size_t>(k)] * d; ++i)
      s.data[static_cast<std::size_t>(k * L * d + i)] = static_cast<T>(nd(g));
  }
  return s;
}

template <class T, class Measure>
void check_loss_and_grad(Measure const& m, double tolerance) {
  auto const xs = random_ragged<T>(7, 40, 2, 11);
  std::mt19937_64 g(3);
  std::normal_distribution<double> nd;
  std::vector<T> z(33 * 2);
  for (auto& v : z) v = static_cast<T>(nd(g));
  std::vector<T> const w{1, 2, 0, 1, 3, 1, 1};
  r::series_view<T const> const zv{z.data(), 33, 2};
  std::vector<double> gh(z.size()), gd(z.size());
  double const lh = rl::barycenter_loss_and_grad(m, zv, xs.view(), std::span<T const>(w),
                                                 std::span<double>(gh));
  double const ld = rl::barycenter_loss_and_grad(r::device, m, zv, xs.view(),
                                                 std::span<T const>(w), std::span<double>(gd));
  CHECK(ld == Approx(lh).epsilon(tolerance));
  double scale = 0;
  for (double v : gh) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < gh.size(); ++i) CHECK(std::abs(gd[i] - gh[i]) <= tolerance * scale);
}
}  // namespace

TEST_CASE("GPU loss and gradient equal the host's", "[cuda][learn]") {
  check_loss_and_grad<double>(r::measures::soft_dtw(0.5), 1e-12);
  check_loss_and_grad<double>(r::measures::soft_dtw_divergence(0.5), 1e-12);
  check_loss_and_grad<double>(r::measures::soft_msm(0.5, 1.0), 1e-12);
  check_loss_and_grad<float>(r::measures::soft_dtw(0.5f), 1e-5);
}

TEST_CASE("GPU barycentres match the host's and are deterministic", "[cuda][learn]") {
  auto const xs = random_ragged<double>(12, 64, 1, 5);
  auto const m = r::measures::soft_dtw(1.0);
  rl::barycenter_options opt;
  opt.max_iter = 30;
  auto const host = rl::lbfgs_barycenter(m, xs.view(), {}, opt);
  auto const a = rl::lbfgs_barycenter(r::device, m, xs.view(), {}, opt);
  auto const b = rl::lbfgs_barycenter(r::device, m, xs.view(), {}, opt);
  CHECK(a.loss == Approx(host.loss).epsilon(1e-6));
  CHECK(a.values == b.values);
  CHECK(a.loss == b.loss);
}
