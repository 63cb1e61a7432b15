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
  // mutable views, as the host accepts them (the device overload did not compile)
  std::vector<double> gm(z.size());
  r::series_view<T> const zm{z.data(), 33, 2};
  CHECK(rl::barycenter_loss_and_grad(r::device, m, zm, xs.view(), std::span<T const>(w), std::span<double>(gm)) == ld);
  CHECK(gm == gd);
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

TEST_CASE("GPU FastCDTW barycentres match the host's and are deterministic", "[cuda][learn][fcdtw]") {
  // The E-step's fits on the device (warm started from each series' logits), the rest on the
  // host: the same alternation, so the host's result to rounding. Series of up to 40 samples
  // fit one thread per series, of up to 150 one block per series (fit_distances' automatic).
  for (r::index_t L : {r::index_t{40}, r::index_t{150}}) {
    for (auto init : {r::fcdtw::warp_init::identity, r::fcdtw::warp_init::grid}) {
      INFO("max length " << L << " init " << static_cast<int>(init));
      auto const xs = random_ragged<double>(9, L, 2, 17);
      r::fcdtw::fit_options fo;
      fo.steps = 40;
      fo.init = init;
      rl::barycenter_options opt;
      opt.max_iter = 4;
      opt.tolerance = 0;
      std::vector<double> const w{1, 2, 1, 1, 3, 1, 1, 2, 1};
      auto const host = rl::fcdtw_barycenter(fo, xs.view(), std::span<double const>(w), opt);
      auto const a = rl::fcdtw_barycenter(r::device, fo, xs.view(), std::span<double const>(w), opt);
      auto const b = rl::fcdtw_barycenter(r::device, fo, xs.view(), std::span<double const>(w), opt);
      CHECK(a.iterations == host.iterations);
      CHECK(a.loss == Approx(host.loss).epsilon(1e-6));
      REQUIRE(a.values.size() == host.values.size());
      double scale = 0;
      for (double v : host.values) scale = std::max(scale, std::abs(v));
      for (std::size_t i = 0; i < a.values.size(); ++i)
        CHECK(std::abs(a.values[i] - host.values[i]) <= 1e-6 * scale);
      CHECK(a.values == b.values);
      CHECK(a.loss == b.loss);
    }
  }
  // float, and a diverging fit refused as on the host
  auto const xf = random_ragged<float>(5, 30, 1, 23);
  r::fcdtw::fit_options fo;
  fo.steps = 30;
  rl::barycenter_options opt;
  opt.max_iter = 3;
  auto const hf = rl::fcdtw_barycenter(fo, xf.view(), {}, opt);
  auto const df = rl::fcdtw_barycenter(r::device, fo, xf.view(), {}, opt);
  CHECK(df.loss == Approx(hf.loss).epsilon(1e-4));
  auto const xd = random_ragged<double>(5, 30, 1, 29);
  r::fcdtw::fit_options wild;
  wild.steps = 60;
  wild.lr = 1e308;
  CHECK_THROWS_AS(rl::fcdtw_barycenter(wild, xd.view(), {}, opt), r::invalid_argument);
  CHECK_THROWS_WITH(rl::fcdtw_barycenter(r::device, wild, xd.view(), {}, opt), Catch::Contains("diverged"));
}
