// Batches (issue 2, item 3): values, values_and_grads, pairwise and pairwise_grads equal the
// per-pair single calls bit for bit on ragged batches, for 1, 2 and all threads (determinism);
// the pairwise divergence of a set with itself has a zero diagonal and is symmetric.
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>
#include <support/address_limit.hpp>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace ref = resilin_test::reference;
using resilin_test::bits_equal;
using resilin_test::bitwise_equal;
using resilin_test::random_values;
using resilin_test::ragged;

namespace {

template <class T, class Measure>
void check_paired(Measure const& meas, char const* name) {
  INFO(name);
  r::index_t const B = 37, d = 2;
  ragged<T> const X(B, 23, d, 11), Y(B, 19, d, 12);
  // single: value(); single_g: the value of value_and_grad() (the same quantity through the
  // gradient path, equal to a few ulp, not bitwise: see values_agree)
  std::vector<T> single(B), single_g(B), gx1(X.data.size()), gy1(Y.data.size());
  for (r::index_t b = 0; b < B; ++b) {
    auto const x = X.series(b), y = Y.series(b);
    single[static_cast<std::size_t>(b)] = r::value(meas, r::view(x, d), r::view(y, d));
    std::vector<T> gx(x.size()), gy(y.size());
    T const v = r::value_and_grad(meas, r::view(x, d), r::view(y, d), r::view(gx, d), r::view(gy, d));
    CHECK(resilin_test::values_agree(v, single[static_cast<std::size_t>(b)]));
    single_g[static_cast<std::size_t>(b)] = v;
    std::copy(gx.begin(), gx.end(), gx1.begin() + b * X.max_length * d);
    std::copy(gy.begin(), gy.end(), gy1.begin() + b * Y.max_length * d);
  }
  for (int threads : {1, 2, 0}) {
    INFO("threads " << threads);
    auto const exec = r::host.with_threads(threads);
    std::vector<T> out(B, T(-5));
    r::values(exec, meas, X.view(), Y.view(), std::span<T>(out));
    CHECK(bitwise_equal(out, single));
    std::vector<T> out2(B, T(-5)), gx(X.data.size(), T(7)), gy(Y.data.size(), T(7));
    r::values_and_grads(exec, meas, X.view(), Y.view(), std::span<T>(out2),
                        r::make_batch(gx, B, X.max_length, d), r::make_batch(gy, B, Y.max_length, d));
    CHECK(bitwise_equal(out2, single_g));
    CHECK(bitwise_equal(gx, gx1));  // includes exact zeros on the padding
    CHECK(bitwise_equal(gy, gy1));
    // An explicit upstream of ones is the default.
    std::vector<T> const ones(B, T(1));
    std::vector<T> gx3(X.data.size()), gy3(Y.data.size());
    r::values_and_grads(exec, meas, X.view(), Y.view(), std::span<T>(out2), r::make_batch(gx3, B, X.max_length, d),
                        r::make_batch(gy3, B, Y.max_length, d), std::span<T const>(ones));
    CHECK(bitwise_equal(gx3, gx1));
    CHECK(bitwise_equal(gy3, gy1));
  }
}

// A and B: fewer than 64 rows of X also split Y into blocks (pairwise_grads_blocks), whose
// partial sums must give the same bits for any thread count
template <class T, class Measure>
void check_pairwise(Measure const& meas, char const* name, r::index_t const A = 9, r::index_t const B = 13) {
  INFO(name << ", " << A << " x " << B);
  r::index_t const d = 3;
  ragged<T> const X(A, 17, d, 21), Y(B, 21, d, 22);
  std::vector<T> single(static_cast<std::size_t>(A * B));
  for (r::index_t a = 0; a < A; ++a)
    for (r::index_t b = 0; b < B; ++b) {
      auto const x = X.series(a), y = Y.series(b);
      single[static_cast<std::size_t>(a * B + b)] = r::value(meas, r::view(x, d), r::view(y, d));
    }
  std::vector<T> g1;
  for (int threads : {1, 2, 0}) {
    INFO("threads " << threads);
    auto const exec = r::host.with_threads(threads);
    std::vector<T> D(single.size(), T(-5));
    r::pairwise(exec, meas, X.view(), Y.view(), r::matrix_view<T>{D.data(), A, B});
    CHECK(bitwise_equal(D, single));
    std::vector<T> gx(X.data.size(), T(3)), out(single.size(), T(-5));
    r::pairwise_grads(exec, meas, X.view(), Y.view(), r::make_batch(gx, A, X.max_length, d),
                      r::matrix_view<T>{out.data(), A, B});
    for (std::size_t k = 0; k < out.size(); ++k)  // the gradient path's value (see values_agree)
      CHECK(resilin_test::values_agree(out[k], single[k]));
    if (g1.empty()) g1 = gx;
    else CHECK(bitwise_equal(gx, g1));  // deterministic across thread counts
  }
  if (!meas.divergence) {
    // its bits: each pair's gradient from zero (value_and_grad's, whether the pair trained in a
    // lock-step group or alone), added to the row in the order of b; with fewer than 64 rows per
    // block of consecutive b (pairwise_grads_blocks), the blocks' sums then in order
    r::index_t const row = X.max_length * d;
    r::index_t const blocks = r::detail::pairwise_grads_blocks(A, B, static_cast<std::size_t>(row) * sizeof(T),
                                                               r::detail::pairwise_grads_block_pairs(meas, X.view(), Y.view()));
    r::index_t const per_block = (B + blocks - 1) / blocks;
    std::vector<T> expected(g1.size(), T(0));
    for (r::index_t a = 0; a < A; ++a) {
      auto const x = X.series(a);
      T* const total = expected.data() + a * row;
      for (r::index_t k = 0; k < blocks; ++k) {
        std::vector<T> partial(x.size(), T(0));
        for (r::index_t b = k * per_block; b < std::min(B, (k + 1) * per_block); ++b) {
          auto const y = Y.series(b);
          std::vector<T> gx(x.size()), gy(y.size());
          r::value_and_grad(meas, r::view(x, d), r::view(y, d), r::view(gx, d), r::view(gy, d));
          for (std::size_t e = 0; e < x.size(); ++e) partial[e] += gx[e];
        }
        for (std::size_t e = 0; e < x.size(); ++e) total[e] = blocks == 1 ? partial[e] : total[e] + partial[e];
      }
    }
    CHECK(bitwise_equal(g1, expected));
  }
  // pairwise_grads is the sum over b of the single-call gradients (up to summation order).
  double const tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (r::index_t a = 0; a < A; ++a) {
    auto const x = X.series(a);
    std::vector<double> sum(x.size(), 0.0);
    double scale = 1;
    for (r::index_t b = 0; b < B; ++b) {
      auto const y = Y.series(b);
      std::vector<T> gx(x.size()), gy(y.size());
      r::value_and_grad(meas, r::view(x, d), r::view(y, d), r::view(gx, d), r::view(gy, d));
      for (std::size_t k = 0; k < x.size(); ++k) {
        sum[k] += double(gx[k]);
        scale = std::max(scale, std::abs(double(gx[k])));
      }
    }
    INFO("a = " << a);
    for (std::size_t k = 0; k < x.size(); ++k)
      CHECK(std::abs(double(g1[static_cast<std::size_t>(a * X.max_length * d) + k]) - sum[k]) <= tol * scale * static_cast<double>(B));
    for (r::index_t k = static_cast<r::index_t>(x.size()); k < X.max_length * d; ++k)
      CHECK(g1[static_cast<std::size_t>(a * X.max_length * d + k)] == T(0));
  }
}

}  // namespace

TEMPLATE_TEST_CASE("values and values_and_grads equal single calls bitwise (ragged, 1/2/all threads)",
                   "[batch]", float, double) {
  using T = TestType;
  check_paired<T>(r::measures::soft_dtw(T(0.5)), "soft-DTW");
  check_paired<T>(r::measures::soft_dtw(T(0.1), r::band_spec::radius(3)), "soft-DTW radius 3");
  check_paired<T>(r::measures::soft_dtw<T, r::l1_distance>(T(1), r::band_spec::window(0.2)), "L1 window 0.2");
  check_paired<T>(r::measures::soft_dtw_divergence(T(0.5)), "divergence");
  check_paired<T>(r::measures::dtw(), "DTW");
  check_paired<T>(r::measures::dtw(r::band_spec::radius(2)), "DTW radius 2");
}

TEMPLATE_TEST_CASE("pairwise and pairwise_grads equal single calls (ragged, 1/2/all threads)", "[batch]",
                   float, double) {
  using T = TestType;
  check_pairwise<T>(r::measures::soft_dtw(T(0.5)), "soft-DTW");
  check_pairwise<T>(r::measures::soft_dtw(T(0.5), r::band_spec::radius(1)), "soft-DTW radius 1");
  check_pairwise<T>(r::measures::soft_dtw_divergence(T(0.5)), "divergence");
  check_pairwise<T>(r::measures::soft_dtw_divergence(T(0.2), r::band_spec::radius(4)), "divergence radius 4");
  check_pairwise<T>(r::measures::dtw(), "DTW");
  // one series against many (blocks of 3 pairs, the last ones empty), and 70 rows (no blocks)
  check_pairwise<T>(r::measures::soft_dtw_divergence(T(0.5)), "divergence", 1, 150);
  check_pairwise<T>(r::measures::soft_msm_divergence(T(0.5), T(0.3)), "soft-MSM divergence", 2, 40);
  check_pairwise<T>(r::measures::soft_dtw(T(0.5)), "soft-DTW", 70, 3);
  // soft-DTW and soft-MSM train in lock-step groups (ragged, full band), several rows and one;
  // independent channels one channel at a time; bands one pair at a time
  check_pairwise<T>(r::measures::soft_dtw(T(0.5)), "soft-DTW", 3, 40);
  check_pairwise<T>(r::measures::soft_dtw(T(0.5)), "soft-DTW", 1, 70);
  check_pairwise<T>(r::measures::soft_msm(T(0.5), T(0.3)), "soft-MSM", 3, 40);
  check_pairwise<T>(r::measures::soft_msm(T(0.5), T(0.3)), "soft-MSM", 65, 9);
  auto split = r::measures::soft_dtw(T(0.5));
  split.independent_channels = true;
  check_pairwise<T>(split, "soft-DTW, channels independent", 3, 40);
  check_pairwise<T>(r::measures::soft_msm(T(0.5), T(0.3), r::band_spec::radius(3)), "soft-MSM radius 3", 2, 20);
}

TEST_CASE("pairwise divergence of a set with itself: zero diagonal, symmetric, non-negative", "[batch][divergence]") {
  r::index_t const B = 16, d = 2;
  ragged<double> const X(B, 30, d, 31);
  for (double gamma : {1.0, 0.1}) {
    for (auto const band : {r::band_spec::none(), r::band_spec::radius(3)}) {
      INFO("gamma = " << gamma << ", band radius " << band.radius_for(30, 30));
      std::vector<double> D(static_cast<std::size_t>(B * B));
      r::pairwise(r::host.with_threads(2), r::measures::soft_dtw_divergence(gamma, band), X.view(), X.view(),
                  r::matrix_view<double>{D.data(), B, B});
      for (r::index_t a = 0; a < B; ++a) {
        CHECK(std::abs(D[static_cast<std::size_t>(a * B + a)]) <= 1e-12);
        for (r::index_t b = 0; b < B; ++b) {
          double const ab = D[static_cast<std::size_t>(a * B + b)], ba = D[static_cast<std::size_t>(b * B + a)];
          CHECK(std::abs(ab - ba) <= 1e-12 * std::max(1.0, std::abs(ab)));
          CHECK(ab >= -1e-12);
        }
      }
      // The plain soft-DTW matrix is symmetric too, with a negative diagonal in general.
      std::vector<double> S(D.size());
      r::pairwise(r::host, r::measures::soft_dtw(gamma, band), X.view(), X.view(), r::matrix_view<double>{S.data(), B, B});
      for (r::index_t a = 0; a < B; ++a)
        for (r::index_t b = 0; b < a; ++b)
          CHECK(S[static_cast<std::size_t>(a * B + b)] ==
                Approx(S[static_cast<std::size_t>(b * B + a)]).epsilon(1e-12).margin(1e-12));
    }
  }
}

TEST_CASE("batch values equal the naive oracle, and the non-ragged batch equals the ragged one", "[batch]") {
  r::index_t const B = 8, L = 12, d = 2;
  ragged<double> const X(B, L, d, 41, true), Y(B, L, d, 42, true);
  std::vector<double> out(B), out2(B);
  auto const meas = r::measures::soft_dtw(0.3);
  r::values(r::host, meas, X.view(), Y.view(), std::span<double>(out));
  // The same data without a lengths array.
  auto const Xn = r::make_batch(std::span<double const>(X.data), B, L, d);
  auto const Yn = r::make_batch(std::span<double const>(Y.data), B, L, d);
  r::values(r::host, meas, Xn, Yn, std::span<double>(out2));
  CHECK(bitwise_equal(out, out2));
  for (r::index_t b = 0; b < B; ++b)
    CHECK(out[static_cast<std::size_t>(b)] ==
          Approx(ref::soft_dtw_value(X.data.data() + b * L * d, Y.data.data() + b * L * d, L, L, d, 0.3)).epsilon(1e-13));
}

TEST_CASE("an empty batch is a no-op", "[batch]") {
  std::vector<double> none;
  auto const X = r::make_batch(none, 0, 4, 1);
  std::vector<double> out;
  r::values(r::host, r::measures::soft_dtw(1.0), X, X, std::span<double>(out));
  r::pairwise(r::host, r::measures::soft_dtw(1.0), X, X, r::matrix_view<double>{out.data(), 0, 0});
  // gradients of no pairs: null GX and GY of the empty shape are fine (they were "GX is null")
  r::batch_view<double> const G{nullptr, 0, 4, 1, nullptr};
  CHECK_NOTHROW(r::values_and_grads(r::host, r::measures::soft_dtw(1.0), X, X, std::span<double>(out), G, G));
  CHECK_NOTHROW(r::pairwise_grads(r::host, r::measures::soft_dtw(1.0), X, X, G));
  // a non-empty batch still needs them
  std::vector<double> one{1, 2, 3, 4};
  auto const Y = r::make_batch(std::span<double>(one), 1, 4, 1);
  std::vector<double> o1(1);
  CHECK_THROWS_WITH(r::values_and_grads(r::host, r::measures::soft_dtw(1.0), Y, Y, std::span<double>(o1),
                                        r::batch_view<double>{nullptr, 1, 4, 1, nullptr}, r::batch_view<double>{nullptr, 1, 4, 1, nullptr}),
                    Catch::Contains("GX is null"));
}

#if RESILIN_TEST_ADDRESS_LIMIT
TEST_CASE("batches: threads that cannot be started leave their tasks to the others", "[batch]") {
  // room for about two thread stacks: the std::system_error of a thread that could not start
  // reached the caller after the work, and the results were lost
  r::index_t const pairs = 64, n = 50;
  auto const xs = random_values<double>(static_cast<std::size_t>(pairs * n), 5);
  auto const ys = random_values<double>(static_cast<std::size_t>(pairs * n), 6);
  auto const X = r::make_batch(xs, pairs, n), Y = r::make_batch(ys, pairs, n);
  auto const m = r::measures::soft_dtw(1.0);
  std::vector<double> expected(static_cast<std::size_t>(pairs));
  r::values(r::host.with_threads(1), m, X, Y, std::span<double>(expected));
  CHECK(resilin_test::under_address_limit(20, [&] {
          std::vector<double> out(static_cast<std::size_t>(pairs));
          r::values(r::host.with_threads(16), m, X, Y, std::span<double>(out));
          return out == expected ? 0 : 1;
        }) == 0);
}
#endif
