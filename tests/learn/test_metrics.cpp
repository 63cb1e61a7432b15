// Metrics: the adjusted Rand index against sklearn's documented values and against the
// pair-counting form of Hubert & Arabie computed over every pair of items; accuracy; label
// encoding in order of first appearance.
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>
#include <support/catch.hpp>
#include <resilin/learn/metrics.hpp>

namespace r = resilin;
namespace rl = resilin::learn;

namespace {
double ari(std::vector<r::index_t> const& a, std::vector<r::index_t> const& b) {
  return rl::adjusted_rand_index(std::span<r::index_t const>(a), std::span<r::index_t const>(b));
}

/// Hubert & Arabie from the four pair counts (same/same, same/different, different/same,
/// different/different): ARI = 2 (n11 n00 - n10 n01) / ((n11 + n10)(n10 + n00) + (n11 + n01)(n01 + n00)).
double ari_by_pairs(std::vector<r::index_t> const& a, std::vector<r::index_t> const& b) {
  double n11 = 0, n10 = 0, n01 = 0, n00 = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      bool const sa = a[i] == a[j], sb = b[i] == b[j];
      (sa ? (sb ? n11 : n10) : (sb ? n01 : n00)) += 1;
    }
  double const den = (n11 + n10) * (n10 + n00) + (n11 + n01) * (n01 + n00);
  if (den == 0) return 1.0;
  return 2 * (n11 * n00 - n10 * n01) / den;
}
}  // namespace

TEST_CASE("adjusted Rand index: the documented values", "[learn][metrics]") {
  CHECK(ari({0, 0, 1, 1}, {0, 0, 1, 1}) == 1.0);
  CHECK(ari({0, 0, 1, 1}, {1, 1, 0, 0}) == 1.0);
  CHECK(ari({0, 0, 1, 2}, {0, 0, 1, 1}) == Approx(0.5714285714285714).epsilon(1e-15));
  CHECK(ari({0, 0, 0, 0}, {0, 1, 2, 3}) == 0.0);
  CHECK(ari({0, 1, 2, 3}, {0, 0, 0, 0}) == 0.0);
  CHECK(ari({5, 5, 5}, {7, 7, 7}) == 1.0);      // one cluster each
  CHECK(ari({0, 1, 2}, {2, 0, 1}) == 1.0);      // singletons each
  CHECK(ari({0, 0, 1, 1}, {0, 1, 0, 1}) == Approx(-0.5).epsilon(1e-15));
  CHECK_THROWS_AS(ari({0, 1}, {0, 1, 2}), r::invalid_argument);
}

TEST_CASE("adjusted Rand index equals the pair-counting form", "[learn][metrics]") {
  std::mt19937_64 gen(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::size_t const n = 2 + gen() % 30;
    r::index_t const ka = 1 + static_cast<r::index_t>(gen() % 5), kb = 1 + static_cast<r::index_t>(gen() % 5);
    std::vector<r::index_t> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<r::index_t>(gen() % static_cast<std::uint64_t>(ka)) * 3 - 4;  // arbitrary codes
      b[i] = static_cast<r::index_t>(gen() % static_cast<std::uint64_t>(kb));
    }
    INFO("trial " << trial);
    CHECK(ari(a, b) == Approx(ari_by_pairs(a, b)).margin(1e-12));
    CHECK(ari(a, b) == Approx(ari(b, a)).margin(1e-15));
  }
}

TEST_CASE("accuracy and label encoding", "[learn][metrics]") {
  std::vector<std::string> const truth{"b", "a", "b", "c"}, pred{"b", "b", "b", "c"};
  CHECK(rl::accuracy(std::span<std::string const>(truth), std::span<std::string const>(pred)) == 0.75);
  CHECK(rl::encode_labels(std::span<std::string const>(truth)) == std::vector<r::index_t>{0, 1, 0, 2});
  std::vector<std::string> const short_pred{"b"};
  CHECK_THROWS_AS(rl::accuracy(std::span<std::string const>(truth), std::span<std::string const>(short_pred)),
                  r::invalid_argument);
  CHECK_THROWS_AS(rl::accuracy({}, {}), r::invalid_argument);
}
