// Exact nearest-neighbour search (search/nearest.hpp) and its lower bound (search/lower_bound.hpp):
// the envelope against a direct minimum and maximum over each band span; LB_Keogh below the
// computed DTW on random ragged pairs (every band kind, distance, channel count, independent
// channels, float and double), equal to it where the band leaves one path; the search's
// neighbours and distances bit for bit those of pairwise()'s argmin, with planted ties, for
// pruned and unpruned measures and 1 or 2 threads; the k nearest against pairwise()'s rows
// sorted by (value, index); pruning that happens; bad input.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <cstdint>
#include <span>
#include <vector>
#include <support/catch.hpp>
#include <resilin/apps/synthetic.hpp>
#include <resilin/resilin.hpp>
#include <resilin/search/nearest.hpp>
#include "helpers.hpp"

namespace r = resilin;
using resilin_test::bits_equal;
using resilin_test::ragged;

namespace {

std::vector<r::band_spec> bands() {
  return {r::band_spec::none(), r::band_spec::radius(0), r::band_spec::radius(3),
          r::band_spec::window(0.1), r::band_spec::window(0.5)};
}

/// The argmin of pairwise(): the reference of the smallest value, the first on ties.
template <class T, class M>
std::vector<r::neighbor<T>> brute_force(M const& m, r::batch_view<T const> q, r::batch_view<T const> refs) {
  std::vector<T> d(static_cast<std::size_t>(q.batch * refs.batch));
  r::pairwise(r::host.with_threads(1), m, q, refs, r::matrix_view<T>{d.data(), q.batch, refs.batch});
  std::vector<r::neighbor<T>> out(static_cast<std::size_t>(q.batch));
  for (r::index_t a = 0; a < q.batch; ++a) {
    r::index_t arg = 0;
    for (r::index_t b = 1; b < refs.batch; ++b)
      if (d[static_cast<std::size_t>(a * refs.batch + b)] < d[static_cast<std::size_t>(a * refs.batch + arg)]) arg = b;
    out[static_cast<std::size_t>(a)] = {arg, d[static_cast<std::size_t>(a * refs.batch + arg)]};
  }
  return out;
}

/// The first k entries of each row of pairwise(), sorted by (value, index).
template <class T, class M>
std::vector<r::neighbor<T>> brute_force_k(M const& m, r::batch_view<T const> q,
                                          r::batch_view<T const> refs, r::index_t k) {
  std::vector<T> d(static_cast<std::size_t>(q.batch * refs.batch));
  r::pairwise(r::host.with_threads(1), m, q, refs, r::matrix_view<T>{d.data(), q.batch, refs.batch});
  std::vector<r::neighbor<T>> out;
  for (r::index_t a = 0; a < q.batch; ++a) {
    std::vector<r::neighbor<T>> row;
    for (r::index_t b = 0; b < refs.batch; ++b) row.push_back({b, d[static_cast<std::size_t>(a * refs.batch + b)]});
    std::sort(row.begin(), row.end(), [](auto const& x, auto const& y) {
      return x.distance < y.distance || (x.distance == y.distance && x.index < y.index);
    });
    out.insert(out.end(), row.begin(), row.begin() + k);
  }
  return out;
}

template <class T>
void check_same(std::vector<r::neighbor<T>> const& got, std::vector<r::neighbor<T>> const& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t a = 0; a < got.size(); ++a) {
    INFO("query " << a);
    CHECK(got[a].index == want[a].index);
    CHECK(bits_equal(got[a].distance, want[a].distance));
  }
}

}  // namespace

TEST_CASE("nearest: keogh_bound refuses an envelope built for other sizes", "[search]") {
  // it trusted the envelope: a stale one (built for 4 rows of another series) gave a "lower
  // bound" of 375 for a DTW of 0, and one of 3 rows read past its end for a y of 2000 samples
  std::vector<double> const other(20, 5.0), x(20, 0.0), y(20, 0.0), long_y(2000, 0.0);
  r::keogh_envelope<double> env;
  env.build({}, r::view(other), 20);
  env.build({}, r::view(x), 4);
  CHECK(env.rows() == 4);
  CHECK(env.length() == 20);
  CHECK_THROWS_WITH(r::keogh_bound<r::squared_euclidean>(env, r::view(x), r::view(y)),
                    Catch::Contains("keogh_bound: the envelope was built for 4 rows"));
  CHECK_THROWS_AS(r::keogh_bound<r::squared_euclidean>(env, r::view(x), r::view(long_y)), r::invalid_argument);
  env.build({}, r::view(x), 20);
  CHECK(r::keogh_bound<r::squared_euclidean>(env, r::view(x), r::view(y)) == 0.0);
  std::vector<double> const other_x(21, 0.0);
  CHECK_THROWS_AS(r::keogh_bound<r::squared_euclidean>(env, r::view(other_x), r::view(y)), r::invalid_argument);
  CHECK_THROWS_AS(env.build({}, r::view(x), 0), r::invalid_argument);
  // build()'s scratch, freed for the envelopes a search keeps (8 bytes per reference sample)
  env.release_scratch();
  CHECK(r::keogh_bound<r::squared_euclidean>(env, r::view(x), r::view(y)) == 0.0);
  env.build({}, r::view(x), 20);  // builds again after the release
  CHECK(env.upper(3, 0) == 0.0);
}

TEST_CASE("nearest: the envelope is the minimum and maximum over each band span", "[search]") {
  ragged<double> const X(40, 37, 2, 11);
  ragged<double> const Y(40, 29, 2, 12);
  r::keogh_envelope<double> env;
  for (auto const& band : bands()) {
    for (r::index_t k = 0; k < X.count; ++k) {
      auto const x = X.view()[k];
      r::index_t const rows = Y.view().length(k);
      env.build(band, x, rows);
      auto const g = r::band_geometry::make(rows, x.length, band.radius_for(x.length, rows));
      for (r::index_t j = 0; j < rows; ++j) {
        auto const span = g.row(j);
        REQUIRE(span.size() > 0);
        for (r::index_t c = 0; c < 2; ++c) {
          double lo = x(span.lo, c), hi = x(span.lo, c);
          for (r::index_t i = span.lo; i <= span.hi; ++i) {
            lo = std::min(lo, x(i, c));
            hi = std::max(hi, x(i, c));
          }
          INFO("pair " << k << " row " << j << " channel " << c << " band kind " << int(band.type()));
          CHECK(env.lower(j, c) == lo);
          CHECK(env.upper(j, c) == hi);
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("nearest: LB_Keogh is below the computed DTW", "[search]", float, double) {
  using T = TestType;
  auto run = [](auto const& base, char const* name) {
    using D = typename std::remove_cvref_t<decltype(base)>::cost_type::distance_type;
    r::keogh_envelope<T> env;
    for (r::index_t d : {1, 3}) {
      ragged<T> const X(60, 41, d, 100 + std::uint64_t(d));
      ragged<T> const Y(60, 53, d, 200 + std::uint64_t(d));
      for (auto const& band : bands()) {
        for (bool independent : {false, true}) {
          auto m = base.with_band(band);
          m.independent_channels = independent;
          r::index_t tight = 0;
          for (r::index_t k = 0; k < X.count; ++k) {
            auto const x = X.view()[k], y = Y.view()[k];
            env.build(band, x, y.length);
            T const lb = r::keogh_bound<D>(env, x, y);
            T const dtw = r::value(m, x, y);
            INFO(name << " channels " << d << " band kind " << int(band.type()) << " independent "
                      << independent << " n " << x.length << " m " << y.length);
            CHECK(lb >= T(0));
            CHECK(r::rounding_safe(lb, x.length, y.length, d) <= dtw);
            tight += lb > T(0.5) * dtw;
          }
          CHECK(tight > 0);  // not a bound of zero
        }
      }
    }
  };
  run(r::measures::dtw(), "squared Euclidean");
  run(r::measures::dtw<r::half_squared_euclidean>(), "half squared Euclidean");
  run(r::measures::dtw<r::l1_distance>(), "L1");
}

// Subnormal costs: the bound's fused first and last terms rounded a tie up where the DTW's cells
// rounded it down (6u against a bound of 8u, u the smallest subnormal), and a relative margin
// leaves such a bound as it is; the nearest reference was pruned (a reviewer's reproducer).
template <class T, class M>
void check_subnormal_ties(M const& m, std::array<T, 4> const& near, std::array<T, 4> const& far) {
  r::index_t const length = 3, channels = 4, count = 101;
  std::vector<T> query(static_cast<std::size_t>(channels * length), T(0));
  std::vector<T> refs(static_cast<std::size_t>(channels * length * count), T(0));
  for (r::index_t k = 0; k < count; ++k)
    for (r::index_t c = 0; c < channels; ++c)
      refs[static_cast<std::size_t>(channels * length * k + c)] =
          (k == 0 ? near : far)[static_cast<std::size_t>(c)];
  auto const Q = r::as_const(r::make_batch(query, 1, length, channels));
  auto const R = r::as_const(r::make_batch(refs, count, length, channels));
  REQUIRE(r::value(m, Q[0], R[0]) < r::value(m, Q[0], R[1]));  // the case this test is about
  auto const expected = brute_force(m, Q, R);
  for (int threads : {1, 2}) {
    auto const got = r::nearest_neighbors(r::host.with_threads(threads), m, Q, R);
    CHECK(got[0].index == expected[0].index);
    CHECK(bits_equal(got[0].distance, expected[0].distance));
  }
}

TEST_CASE("nearest: subnormal costs do not prune the nearest reference", "[search]") {
  float const uf = std::ldexp(1.0f, -149);
  float const q3 = std::sqrt(3.0f * uf), hf = std::ldexp(1.0f, -75), wf = std::ldexp(1.0f, -74);
  check_subnormal_ties<float>(r::measures::dtw(), {q3, hf, q3, hf}, {q3, wf, wf, 0.0f});
  double const s = std::ldexp(1.0, -537), a = std::sqrt(2.0) * s;
  check_subnormal_ties<double>(r::measures::dtw<r::half_squared_euclidean>(), {a, s, a, s}, {a, a, a, 0.0});
}

TEMPLATE_TEST_CASE("nearest: a bound that overflows does not prune a finite nearest reference", "[search]",
                   float, double) {
  // L1 near the largest finite value: the bound sums ((X + u) + 2u) + u, rounded to inf, where the
  // DTW's path sums ((X + 2u) + u) + u, rounded to max - 1 ulp; rounding_safe kept inf, and the
  // search returned a reference at max (a reviewer's reproducer)
  using T = TestType;
  T const M = std::numeric_limits<T>::max();
  T const u = std::ldexp(T(1), std::numeric_limits<T>::max_exponent - std::numeric_limits<T>::digits - 1);
  r::index_t const count = 100;
  std::vector<T> const query(4, T(0));
  std::vector<T> refs{M - 4 * u, 2 * u, u, u};
  for (r::index_t k = 1; k < count; ++k) refs.insert(refs.end(), {M, T(0), T(0), T(0)});
  auto const Q = r::as_const(r::make_batch(query, 1, 4, 1));
  auto const R = r::as_const(r::make_batch(refs, count, 4, 1));
  for (auto const& m : {r::measures::dtw<r::l1_distance>(), r::measures::dtw<r::l1_distance>(r::band_spec::radius(0))}) {
    REQUIRE(r::value(m, Q[0], R[0]) < r::value(m, Q[0], R[1]));  // the case this test is about
    r::keogh_envelope<T> env;
    env.build(m.band, Q[0], 4);
    CHECK(r::rounding_safe(r::keogh_bound<r::l1_distance>(env, Q[0], R[0]), 4, 4, 1) <= r::value(m, Q[0], R[0]));
    for (int threads : {1, 2}) {
      auto const got = r::nearest_neighbors(r::host.with_threads(threads), m, Q, R);
      CHECK(got[0].index == 0);
      CHECK(bits_equal(got[0].distance, r::value(m, Q[0], R[0])));
    }
  }
}

TEST_CASE("nearest: half squared Euclidean where the square overflows and its half does not", "[search]") {
  // (x - y)^2 overflowed before the halving: DTW([0], [2e19]) in float was inf for 2e38, and the
  // nearest reference below lost to one at 1.69e308 (its own distance 1.125e308 became inf)
  auto const m = r::measures::dtw<r::half_squared_euclidean>();
  std::vector<float> const a{0.0f}, b{2e19f};
  CHECK(r::value(m, r::view(a), r::view(b)) == 2e38f);
  std::vector<double> const query{0.0, 0.0}, refs{1.5e154, 0.0, 1.3e154, 1.3e154};
  auto const Q = r::as_const(r::make_batch(query, 1, 2, 1));
  auto const R = r::as_const(r::make_batch(refs, 2, 2, 1));
  CHECK(r::value(m, Q[0], R[0]) == Approx(1.125e308).epsilon(1e-15));
  for (int threads : {1, 2}) {
    auto const got = r::nearest_neighbors(r::host.with_threads(threads), m, Q, R);
    CHECK(got[0].index == 0);
  }
  // the gradient of the soft form stays finite there too
  std::vector<double> gx(1), gy(1);
  std::vector<double> const x{0.0}, y{1.5e154};
  double const v = r::value_and_grad(r::measures::soft_dtw<double, r::half_squared_euclidean>(1.0), r::view(x),
                                     r::view(y), r::view(gx), r::view(gy));
  CHECK(v == Approx(1.125e308).epsilon(1e-15));
  CHECK(gx[0] == -1.5e154);
  CHECK(gy[0] == 1.5e154);
}

TEMPLATE_TEST_CASE("nearest: with a band of radius 0 and equal lengths the bound is the DTW",
                   "[search]", float, double) {
  using T = TestType;
  ragged<T> const X(20, 64, 2, 31, true), Y(20, 64, 2, 32, true);
  auto const m = r::measures::dtw(r::band_spec::radius(0));
  r::keogh_envelope<T> env;
  for (r::index_t k = 0; k < X.count; ++k) {
    env.build(m.band, X.view()[k], 64);
    T const lb = r::keogh_bound<r::squared_euclidean>(env, X.view()[k], Y.view()[k]);
    CHECK(lb == Approx(r::value(m, X.view()[k], Y.view()[k])).epsilon(1e-5));
  }
}

TEMPLATE_TEST_CASE("nearest: the neighbours of pairwise()'s argmin, bit for bit", "[search]",
                   float, double) {
  using T = TestType;
  ragged<T> const Q(23, 48, 2, 41);
  ragged<T> refs(37, 45, 2, 42);
  refs.copy(30, 5);  // ties: two copies of one series, and of a query
  refs.copy(30, 33);
  auto qs = Q;
  std::copy_n(refs.data.begin() + 30 * 45 * 2, 45 * 2, qs.data.begin() + 7 * 48 * 2);
  qs.lengths[7] = refs.lengths[30];
  // under the sanitizers (-O0): the two window bands and 2 threads
  for (auto const& band : resilin_test::unless_sanitized(bands(), 2)) {
    for (int threads : resilin_test::unless_sanitized<int>({1, 2})) {
      INFO("band kind " << int(band.type()) << " threads " << threads);
      auto const exec = r::host.with_threads(threads);
      auto const dtw = r::measures::dtw(band);
      r::search_stats st;
      auto const got = r::nearest_neighbors(exec, dtw, qs.view(), refs.view(), &st);
      check_same(got, brute_force(dtw, qs.view(), refs.view()));
      CHECK(got[7].index == 5);  // the copy of reference 30 that comes first
      CHECK(got[7].distance == T(0));
      CHECK(st.pairs == 23 * 37);
      CHECK(st.computed <= st.pairs);
      auto indep = r::measures::dtw<r::l1_distance>(band);
      indep.independent_channels = true;
      check_same(r::nearest_neighbors(exec, indep, qs.view(), refs.view()),
                 brute_force(indep, qs.view(), refs.view()));
      // measures without the bound compute every pair
      auto const soft = r::measures::soft_dtw<T>(T(0.5), band);
      check_same(r::nearest_neighbors(exec, soft, qs.view(), refs.view(), &st),
                 brute_force(soft, qs.view(), refs.view()));
      CHECK(st.computed == st.pairs);
      auto const div = r::measures::soft_dtw_divergence<T>(T(0.5), band);
      check_same(r::nearest_neighbors(exec, div, qs.view(), refs.view()),
                 brute_force(div, qs.view(), refs.view()));
      auto const msm = r::measures::msm(1.0, band);
      if constexpr (std::is_same_v<T, double>)
        check_same(r::nearest_neighbors(exec, msm, qs.view(), refs.view()),
                   brute_force(msm, qs.view(), refs.view()));
    }
  }
}

TEMPLATE_TEST_CASE("nearest: the k nearest are pairwise()'s rows sorted, bit for bit", "[search]",
                   float, double) {
  using T = TestType;
  ragged<T> const Q(19, 48, 1, 51);
  ragged<T> refs(29, 44, 1, 52);
  refs.copy(3, 11);  // ties between neighbours: three copies of one series
  refs.copy(3, 20);
  auto qs = Q;
  std::copy_n(refs.data.begin() + 3 * 44, 44, qs.data.begin() + 4 * 48);
  qs.lengths[4] = refs.lengths[3];
  for (auto const& band : resilin_test::unless_sanitized(bands(), 2)) {
    for (r::index_t k : {r::index_t(1), r::index_t(3), r::index_t(8), refs.view().batch}) {
      INFO("band kind " << int(band.type()) << " k " << k);
      auto const exec = r::host.with_threads(2);
      auto const dtw = r::measures::dtw(band);
      r::search_stats st;
      auto const got = r::k_nearest_neighbors(exec, dtw, qs.view(), refs.view(), k, &st);
      check_same(got, brute_force_k(dtw, qs.view(), refs.view(), k));
      CHECK(st.computed <= st.pairs);
      if (k >= 3) {  // the copies in index order, at distance 0
        CHECK(got[static_cast<std::size_t>(4 * k)].index == 3);
        CHECK(got[static_cast<std::size_t>(4 * k + 1)].index == 11);
        CHECK(got[static_cast<std::size_t>(4 * k + 2)].index == 20);
        CHECK(got[static_cast<std::size_t>(4 * k + 2)].distance == T(0));
      }
      if (k == 1) check_same(got, r::nearest_neighbors(exec, dtw, qs.view(), refs.view()));
      auto const soft = r::measures::soft_dtw<T>(T(0.5), band);  // no bound: every pair
      check_same(r::k_nearest_neighbors(exec, soft, qs.view(), refs.view(), k, &st),
                 brute_force_k(soft, qs.view(), refs.view(), k));
      CHECK(st.computed == st.pairs);
    }
  }
}

TEST_CASE("nearest: the bound prunes on classes of similar series", "[search]") {
  // Cylinder-Bell-Funnel: 1-NN with a 10 % window, the UCR setting
  auto const train = r::make_cbf<double>({.per_class = 20, .length = 128, .seed = 5});
  auto const test = r::make_cbf<double>({.per_class = 10, .length = 128, .seed = 6});
  auto const m = r::measures::dtw(r::band_spec::window(0.1));
  r::search_stats st;
  auto const got = r::nearest_neighbors(r::host.with_threads(2), m, test.view(), train.view(), &st);
  check_same(got, brute_force(m, test.view(), train.view()));
  CHECK(st.pairs == 30 * 60);
  CHECK(st.computed < st.pairs / 2);
}

TEST_CASE("nearest: bad input is refused", "[search]") {
  ragged<double> const Q(3, 10, 2, 1), R(4, 10, 1, 2), R2(4, 10, 2, 3);
  auto const m = r::measures::dtw();
  CHECK_THROWS_AS(r::nearest_neighbors(r::host, m, Q.view(), R.view()), r::invalid_argument);
  r::batch_view<double const> const none{R2.data.data(), 0, 10, 2, nullptr};
  CHECK_THROWS_AS(r::nearest_neighbors(r::host, m, Q.view(), none), r::invalid_argument);
  CHECK(r::nearest_neighbors(r::host, m, none, R2.view()).empty());
  CHECK_THROWS_AS(r::k_nearest_neighbors(r::host, m, Q.view(), R2.view(), 0), r::invalid_argument);
  CHECK_THROWS_AS(r::k_nearest_neighbors(r::host, m, Q.view(), R2.view(), 5), r::invalid_argument);
  CHECK(r::k_nearest_neighbors(r::host, m, Q.view(), R2.view(), 4).size() == 12);
  std::vector<double> bad(20, 0.0);
  bad[3] = std::numeric_limits<double>::infinity();
  auto const B = r::make_batch(bad, 2, 5, 2);
  CHECK_THROWS_AS(r::nearest_neighbors(r::host, m, B, R2.view()), r::invalid_argument);
}
