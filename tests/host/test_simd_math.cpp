// The host SIMD exp and log (backend/host/simd.hpp) against long double references: the largest
// error in ulps over their whole input ranges, dense near the points where the reductions switch
// (k changes in exp; the mantissa passes sqrt(2) in log), their special values, and equal bits
// for one pack and for several packs as one value (packs.hpp). Built for the baseline ISA and
// again for this machine's (host_test_simd_math_native), whose vectors may take other paths.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>
#include <catch2/catch.hpp>
#include <resilin/backend/host/packs.hpp>
#include <resilin/backend/host/simd.hpp>

namespace {

namespace simd = resilin::simd;

/// |a - ref| in units of the last place of ref in T (ref's spacing: the smaller one at powers of 2
/// going down, so that the count is never flattering).
template <class T>
long double ulps(T a, long double ref) {
  T const r = static_cast<T>(ref);
  T const below = std::nextafter(std::abs(r), T(0));
  long double spacing = static_cast<long double>(std::abs(r)) - static_cast<long double>(below);
  if (spacing == 0) spacing = std::numeric_limits<T>::denorm_min();
  return std::abs(static_cast<long double>(a) - ref) / spacing;
}

/// The largest ulp error of f over xs, with the worst argument for the message.
template <class T, class F, class Ref>
std::pair<long double, T> worst(std::vector<T> const& xs, F f, Ref ref) {
  using V = simd::pack<T>;
  constexpr int W = V::width;
  std::pair<long double, T> w{0, T(0)};
  std::vector<T> in(W), out(W);
  for (std::size_t k = 0; k < xs.size(); k += W) {
    for (int l = 0; l < W; ++l) in[static_cast<std::size_t>(l)] = xs[std::min(xs.size() - 1, k + static_cast<std::size_t>(l))];
    f(V::load(in.data())).store(out.data());
    for (int l = 0; l < W; ++l) {
      auto const u = static_cast<std::size_t>(l);
      long double const e = ulps(out[u], ref(static_cast<long double>(in[u])));
      if (e > w.first) w = {e, in[u]};
    }
  }
  return w;
}

template <class T>
std::vector<T> uniform(T lo, T hi, int count, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(static_cast<double>(lo), static_cast<double>(hi));
  std::vector<T> xs(static_cast<std::size_t>(count));
  for (auto& x : xs) x = static_cast<T>(u(gen));
  return xs;
}

/// Arguments of exp: the library's range (<= 0, down to where the result is no longer normal),
/// dense on [-2, 2] and around every multiple of ln(2) / 2 there (where round(x / ln 2) moves).
template <class T>
std::vector<T> exp_arguments() {
  T const lo = std::same_as<T, double> ? T(-708.39) : T(-87.33);
  T const hi = std::same_as<T, double> ? T(709.4) : T(88.3);
  std::vector<T> xs = uniform<T>(lo, T(0), 200000, 1);
  for (T x : uniform<T>(T(-2), T(2), 200000, 2)) xs.push_back(x);
  for (T x : uniform<T>(T(0), hi, 20000, 3)) xs.push_back(x);
  for (int k = -60; k <= 60; ++k) {
    T const c = static_cast<T>(k * 0.34657359027997264);
    T x = c;
    for (int s = 0; s < 40; ++s) x = std::nextafter(x, -std::numeric_limits<T>::infinity());
    for (int s = 0; s < 80; ++s, x = std::nextafter(x, std::numeric_limits<T>::infinity())) xs.push_back(x);
  }
  return xs;
}

/// Arguments of log: every binade of the normal numbers up to 4 (log-uniform), dense on
/// [0.5, 3] (the soft-min's sums), near 1 and around sqrt(2) (where the reduction halves f).
template <class T>
std::vector<T> log_arguments() {
  std::vector<T> xs;
  std::mt19937_64 gen(4);
  std::uniform_real_distribution<double> e(std::log2(static_cast<double>(std::numeric_limits<T>::min())), 2.0);
  for (int k = 0; k < 200000; ++k) xs.push_back(static_cast<T>(std::exp2(e(gen))));
  for (T x : uniform<T>(T(0.5), T(3), 200000, 5)) xs.push_back(x);
  for (T x : uniform<T>(T(0.999), T(1.001), 20000, 6)) xs.push_back(x);
  for (T c : {T(1), T(1.4142135623730951), T(0.7071067811865476), T(2)}) {
    T x = c;
    for (int s = 0; s < 40; ++s) x = std::nextafter(x, T(0));
    for (int s = 0; s < 80; ++s, x = std::nextafter(x, T(4))) xs.push_back(x);
  }
  return xs;
}

template <class T>
simd::pack<T> exp_pack(simd::pack<T> x) { return exp(x); }
template <class T>
simd::pack<T> log_pack(simd::pack<T> x) { return log(x); }

}  // namespace

TEMPLATE_TEST_CASE("simd exp and log stay within a few ulp over their ranges", "[simd][numerics]", float, double) {
  using T = TestType;
  // measured on x86-64, SSE2 and AVX-512 builds alike: exp 2.13 and log 1.93 ulp in double,
  // exp 1.67 and log 1.88 in float; the bound leaves room for other targets' contractions
  long double const bound = 3;
  auto const e = worst<T>(exp_arguments<T>(), exp_pack<T>, [](long double x) { return std::exp(x); });
  INFO("exp: " << static_cast<double>(e.first) << " ulp at x = " << e.second);
  CHECK(e.first <= bound);
  auto const l = worst<T>(log_arguments<T>(), log_pack<T>, [](long double x) { return std::log(x); });
  INFO("log: " << static_cast<double>(l.first) << " ulp at x = " << l.second);
  CHECK(l.first <= bound);
}

TEMPLATE_TEST_CASE("simd exp and log: special values", "[simd][numerics]", float, double) {
  using T = TestType;
  using V = simd::pack<T>;
  T const inf = std::numeric_limits<T>::infinity();
  auto const e = [](T x) { return exp(V(x))[0]; };
  auto const l = [](T x) { return log(V(x))[0]; };
  CHECK(e(T(0)) == T(1));
  CHECK(e(-inf) == T(0));
  CHECK(e(T(-1e4)) == T(0));
  CHECK(e(std::same_as<T, double> ? T(-708.5) : T(-87.5)) == T(0));  // below the normal range: +0
  CHECK(std::signbit(e(T(-1e4))) == false);
  CHECK(l(T(1)) == T(0));
  CHECK(l(T(0)) == -inf);
  CHECK(l(T(2)) == static_cast<T>(0.6931471805599453));
  CHECK(l(std::numeric_limits<T>::min()) == static_cast<T>(std::log(static_cast<long double>(std::numeric_limits<T>::min()))));
}

TEMPLATE_TEST_CASE("simd exp and log: several packs as one value have each pack's bits", "[simd]", float, double) {
  using T = TestType;
  using V = simd::pack<T>;
  using P2 = simd::packs<T, 2>;
  constexpr int W = V::width;
  std::vector<T> const xs = uniform<T>(T(-30), T(3), 4096, 7);
  for (std::size_t k = 0; k + 2 * W <= xs.size(); k += 2 * W) {
    V const a = V::load(xs.data() + k), b = V::load(xs.data() + k + W);
    P2 const two = P2::of(a, b);
    P2 const ex = exp(two);
    V const pa = simd::max(a * a, V(T(1e-3))), pb = simd::max(b * b, V(T(1e-3)));
    P2 const lg = log(P2::of(pa, pb));
    for (int l = 0; l < W; ++l) {
      CHECK(std::bit_cast<std::make_unsigned_t<typename V::int_type>>(ex.v[0][l]) ==
            std::bit_cast<std::make_unsigned_t<typename V::int_type>>(exp(a)[l]));
      CHECK(std::bit_cast<std::make_unsigned_t<typename V::int_type>>(ex.v[1][l]) ==
            std::bit_cast<std::make_unsigned_t<typename V::int_type>>(exp(b)[l]));
      CHECK(std::bit_cast<std::make_unsigned_t<typename V::int_type>>(lg.v[0][l]) ==
            std::bit_cast<std::make_unsigned_t<typename V::int_type>>(log(pa)[l]));
      CHECK(std::bit_cast<std::make_unsigned_t<typename V::int_type>>(lg.v[1][l]) ==
            std::bit_cast<std::make_unsigned_t<typename V::int_type>>(log(pb)[l]));
    }
  }
}
