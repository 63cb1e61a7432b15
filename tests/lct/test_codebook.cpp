#include <support/catch.hpp>

#include <algorithm>
#include <cmath>
#include <queue>
#include <string>

#include "test_util.hpp"

using namespace lct_test;

namespace {
// Unlimited Huffman cost (sum of weight * depth) by the two-queue method.
std::uint64_t huffman_cost(std::vector<std::uint64_t> w) {
  std::priority_queue<std::uint64_t, std::vector<std::uint64_t>, std::greater<>> q;
  for (auto x : w) if (x) q.push(x);
  std::uint64_t cost = 0;
  while (q.size() > 1) {
    auto a = q.top(); q.pop();
    auto b = q.top(); q.pop();
    cost += a + b;
    q.push(a + b);
  }
  return cost;
}
std::uint64_t kraft(std::vector<std::uint8_t> const& len, unsigned L) {
  std::uint64_t k = 0;
  for (auto l : len) if (l) k += std::uint64_t{1} << (L - l);
  return k;
}
}  // namespace

TEST_CASE("package-merge equals Huffman when the limit does not bind", "[lct][codebook]") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::uint64_t> w(2 + rng() % 40);
    for (auto& x : w) x = 1 + rng() % 1000;
    auto len = lct::package_merge(w, 30);
    std::uint64_t cost = 0;
    for (std::size_t i = 0; i < w.size(); ++i) cost += w[i] * len[i];
    REQUIRE(cost == huffman_cost(w));
    REQUIRE(kraft(len, 30) == (std::uint64_t{1} << 30));
  }
}

TEST_CASE("package-merge respects the length limit and stays complete", "[lct][codebook]") {
  std::vector<std::uint64_t> w(40);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::uint64_t{1} << std::min<std::size_t>(i, 50);  // very skewed
  for (unsigned L : {6u, 8u, 12u}) {
    auto len = lct::package_merge(w, L);
    REQUIRE(*std::max_element(len.begin(), len.end()) <= L);
    REQUIRE(kraft(len, L) == (std::uint64_t{1} << L));
  }
  REQUIRE_THROWS_AS(lct::package_merge(std::vector<std::uint64_t>{5}, 12), lct::invalid_argument);
  REQUIRE_THROWS_AS(lct::package_merge(std::vector<std::uint64_t>(9, 1), 3), lct::invalid_argument);
}

TEST_CASE("codebook: modal keying, escape, serialisation", "[lct][codebook]") {
  auto x = gaussian_bf16(100000, 0.02f, 1);
  auto book = lct::codebook::from_sample(lct::dtype::bf16, x.data(), x.size(), 9);
  REQUIRE(book.escape_length() >= 1);
  REQUIRE(book.escape_length() <= lct::max_code_length);
  REQUIRE(book.length(0) >= 1);          // key 0 = the modal exponent is in the book
  REQUIRE(book.length(0) <= 3);
  auto bytes = book.serialize();
  auto back = lct::codebook::deserialize(bytes);
  REQUIRE(back.id() == 9);
  for (unsigned k = 0; k < 256; ++k) REQUIRE(back.length(k) == book.length(k));
  REQUIRE(back.escape_length() == book.escape_length());

  auto bad = bytes;
  bad[10] ^= 0x11;   // a length nibble: the checksum refuses it
  REQUIRE_THROWS_AS(lct::codebook::deserialize(bad), lct::format_error);
  bad = bytes;
  bad[0] = 'X';
  REQUIRE_THROWS_AS(lct::codebook::deserialize(bad), lct::format_error);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut)
    REQUIRE_THROWS_AS(lct::codebook::deserialize(std::span(bytes.data(), cut)), lct::format_error);
}

TEST_CASE("codebook: an incomplete prefix code is refused", "[lct][codebook]") {
  auto book = lct::codebook::from_sample(lct::dtype::fp16, nullptr, 0);
  auto bytes = book.serialize();
  // rewrite: one key of length 2 only (+ escape 2): Kraft 1/2 -> refused, with a valid checksum
  std::vector<std::uint8_t> b(bytes.begin(), bytes.begin() + 6);
  lct::detail::put_le<std::uint32_t>(b, 0);
  b.push_back(2);
  for (unsigned k = 0; k < 16; ++k) b.push_back(k == 0 ? 2 : 0);
  lct::detail::put_le<std::uint32_t>(b, XXH32(b.data(), b.size(), 0));
  REQUIRE_THROWS_WITH(lct::codebook::deserialize(b), Catch::Matchers::Contains("complete prefix code"));
}

TEST_CASE("is_complete_book: what the GPU decoder accepts", "[lct][codebook]") {
  // every book a codebook builds is complete for its own dtype and for no other alphabet
  for (auto t : {lct::dtype::bf16, lct::dtype::fp16, lct::dtype::fp32}) {
    auto x = gaussian_bf16(40000, 0.5f, 3);
    std::uint64_t const n = 40000 / lct::element_bytes(t);   // the first 40000 bytes (the
                                                            // histogram prefetches past its end)
    auto const book = lct::codebook::from_sample(t, x.data(), n);
    lct::code_lengths const cl = book.lengths();
    CHECK(lct::is_complete_book(cl, lct::alphabet_size(t)));
    CHECK_FALSE(lct::is_complete_book(cl, t == lct::dtype::fp16 ? 256u : 32u));
    lct::code_lengths no_escape = cl;   // the escape's share of the Kraft sum goes missing
    no_escape.len[cl.n_keys] = 0;
    CHECK_FALSE(lct::is_complete_book(no_escape, lct::alphabet_size(t)));
    lct::code_lengths longer = cl;      // one code one bit longer: Kraft sum below 1
    unsigned k = 0;
    while (longer.len[k] == 0 || longer.len[k] >= lct::max_code_length) ++k;
    ++longer.len[k];
    CHECK_FALSE(lct::is_complete_book(longer, lct::alphabet_size(t)));
  }
  CHECK_FALSE(lct::is_complete_book(lct::code_lengths{}, 256u));   // the empty default
  lct::code_lengths too_long{};       // complete, but past the LUT's length limit
  too_long.n_keys = 1;
  too_long.len[0] = 1;
  too_long.len[1] = 1;
  CHECK(lct::is_complete_book(too_long, 1u));
  too_long.len[0] = 13;
  CHECK_FALSE(lct::is_complete_book(too_long, 1u));
}

TEST_CASE("refresh policy reacts to magnitude drift only through the key window", "[lct][codebook]") {
  auto x = gaussian_bf16(50000, 0.02f, 2);
  auto book = lct::codebook::from_sample(lct::dtype::bf16, x.data(), x.size());
  // uniform rescale by 2^4: modal keying absorbs it, no refresh needed
  auto y = gaussian_bf16(50000, 0.32f, 3);
  lct::histogram h{};
  lct::accumulate_histogram(lct::dtype::bf16, y.data(), y.size(), h);
  auto a = book.assess(lct::key_histogram(h, lct::modal_exponent(h, 256), 256));
  REQUIRE_FALSE(a.refresh);
  REQUIRE(a.escape_rate < 1e-3);
  // a much wider distribution (uniform random bits) escapes heavily: refresh
  auto z = random_bytes(100000, 4);
  lct::histogram hz{};
  lct::accumulate_histogram(lct::dtype::bf16, z.data(), z.size() / 2, hz);
  auto b = book.assess(lct::key_histogram(hz, lct::modal_exponent(hz, 256), 256));
  REQUIRE(b.refresh);
  REQUIRE(b.escape_rate > 0.5);
}

TEST_CASE("codebook: accumulated counts near 2^64 still give a complete book", "[lct][codebook]") {
  // the counts' sum wrapped around 2^64 and package-merge returned an incomplete book
  lct::histogram h{};
  h[0] = h[1] = UINT64_MAX;
  h[2] = 5;
  h[3] = UINT64_MAX / 3;
  auto const book = lct::codebook::build(lct::dtype::bf16, h);
  CHECK(lct::is_complete_book(book.lengths(), 256));
  CHECK(book.length(2) > 0);  // a small nonzero count keeps its code
  CHECK(book.length(0) <= book.length(3));
  // counts below 2^58 in total give the same book as before (no scaling)
  lct::histogram small{};
  small[0] = 1000;
  small[1] = 10;
  small[5] = 1;
  auto const a = lct::codebook::build(lct::dtype::bf16, small);
  for (auto& c : small) c <<= 40;
  auto const b = lct::codebook::build(lct::dtype::bf16, small);
  for (unsigned k = 0; k <= 256; ++k) CHECK(a.lengths().len[k] == b.lengths().len[k]);
}

TEST_CASE("lct: weights and counts past 2^64 neither wrap nor give wrong codes", "[lct][codebook]") {
  // package_merge's package sums wrapped: {2^64-1, 1, 1, 1} gave lengths 1, 12, 12, 11 (Kraft
  // sum 0.500977); it now refuses sums past (2^64 - 1) / (max_len + 1)
  std::vector<std::uint64_t> const big{UINT64_MAX, 1, 1, 1};
  CHECK_THROWS_AS(lct::package_merge(big, 12), lct::invalid_argument);
  std::uint64_t const most = UINT64_MAX / 13;
  std::vector<std::uint64_t> const edge{most - 3, 1, 1, 1};
  auto const len = lct::package_merge(edge, 12);
  REQUIRE(len.size() == 4);
  CHECK(len[0] == 1);  // the heavy symbol; the three equal ones share 2, 3, 3 (ties by index)
  std::vector<std::uint8_t> rest(len.begin() + 1, len.end());
  std::sort(rest.begin(), rest.end());
  CHECK(rest == std::vector<std::uint8_t>{2, 3, 3});
  // the totals wrapped: {2^63, 2^63} had entropy 0 and total 0
  lct::histogram h{};
  h[0] = h[1] = std::uint64_t{1} << 63;
  CHECK(lct::total(h) == UINT64_MAX);
  CHECK(std::abs(lct::entropy_bits(h) - 1.0) < 1e-15);
  // assessing {2^63, 2^63, 2^62} with a book of the first two keys: entropy -4 and escape rate 1
  // came out of the wrapped sums (1.5219 and 0.2 are right)
  auto const book = lct::codebook::build(lct::dtype::bf16, h);
  REQUIRE(book.length(2) == 0);
  h[2] = std::uint64_t{1} << 62;
  auto const a = book.assess(h);
  CHECK(std::abs(a.entropy - 1.5219280948873623) < 1e-12);
  CHECK(std::abs(a.escape_rate - 0.2) < 1e-12);
  CHECK(a.refresh);
  CHECK(a.book_bits > a.entropy);
}

TEST_CASE("codebook: an empty book asks for a refresh; key windows stay in the histogram", "[lct][codebook]") {
  lct::histogram h{};
  h[0] = 100;
  h[1] = 50;
  auto const a = lct::codebook{}.assess(h);
  CHECK(a.refresh);
  CHECK(a.escape_rate == 1.0);
  CHECK(!lct::codebook{}.assess(lct::histogram{}).refresh);  // no data: nothing to decide
  // an fp16 book measures its 32 keys: counts beyond them are not part of the alphabet (they
  // were in n, not in the bits)
  lct::histogram f{};
  f[0] = 90;
  f[1] = 10;
  auto const fp16 = lct::codebook::build(lct::dtype::fp16, f);
  auto const base = fp16.assess(f);
  f[100] = 1000;
  auto const with_noise = fp16.assess(f);
  CHECK(with_noise.book_bits == base.book_bits);
  CHECK(with_noise.entropy == base.entropy);
  // an alphabet size beyond the 256 bins is read as 256 (it read past the array)
  h[255] = 7;
  CHECK(lct::key_histogram(h, 3, 512) == lct::key_histogram(h, 3, 256));
  CHECK(lct::modal_exponent(h, 512) == 0);
}

TEST_CASE("codebook: a max_len too short for the symbols seen is refused by name", "[lct][codebook]") {
  lct::histogram h{};
  for (auto& c : h) c = 1;  // every bf16 key seen, plus the escape: 257 symbols need 9 bits
  try {
    (void)lct::codebook::build(lct::dtype::bf16, h, 0, 8);
    FAIL("no error");
  } catch (lct::invalid_argument const& e) {
    CHECK(std::string(e.what()).find("codebook::build: 257 symbols") != std::string::npos);
  }
  CHECK_NOTHROW(lct::codebook::build(lct::dtype::bf16, h, 0, 9));
}

TEST_CASE("codebook: a null sample with elements is refused, not read", "[lct][codebook]") {
  // it passed the alignment check (0 is aligned) and was dereferenced
  lct::histogram h{};
  CHECK_THROWS_AS(lct::accumulate_histogram(lct::dtype::bf16, nullptr, 10, h), lct::invalid_argument);
  CHECK_THROWS_AS(lct::codebook::from_sample(lct::dtype::fp32, nullptr, 3), lct::invalid_argument);
  CHECK_NOTHROW(lct::accumulate_histogram(lct::dtype::bf16, nullptr, 0, h));
}

TEST_CASE("codebook: needs_refresh decides as assess does, building no fresh book where the entropy settles it",
          "[lct][codebook]") {
  // no prefix code beats the entropy, so a book within (1 + max_overhead) of it needs no
  // comparison with a fresh one (compressed_tensor built one at every encode: +15 to +75 % per
  // 4096-value encode); the decisions agree with assess() on drifting, widened, random and
  // dyadic histograms, for tight and loose policies
  std::mt19937_64 rng(7);
  int refreshes = 0, agreements = 0;
  for (int trial = 0; trial < 400; ++trial) {
    lct::dtype const t = trial % 3 == 0 ? lct::dtype::fp16 : lct::dtype::bf16;
    unsigned const keys = lct::alphabet_size(t);
    auto histogram_of = [&](double spread, unsigned centre) {
      lct::histogram h{};
      for (int k = 0; k < 20000; ++k) {
        double const z = std::normal_distribution<double>(0.0, spread)(rng);
        long const key = static_cast<long>(centre) + std::lround(z);
        if (key >= 0 && key < static_cast<long>(keys)) ++h[static_cast<std::size_t>(key)];
      }
      return h;
    };
    double const spread = 1.0 + static_cast<double>(trial % 5);
    lct::codebook const book = lct::codebook::build(t, histogram_of(spread, keys / 2));
    // half the trials: fresh samples of the book's own distribution (the steady state)
    lct::histogram h = trial % 4 < 2 ? histogram_of(spread, keys / 2)
                                     : histogram_of(1.0 + static_cast<double>((trial / 5) % 7) * 0.7, keys / 2 + trial % 4);
    if (trial % 50 == 0) {  // dyadic: a fresh book meets the entropy exactly
      h = {};
      h[keys / 2] = 8;
      h[keys / 2 + 1] = 4;
      h[keys / 2 + 2] = 2;
      h[keys / 2 + 3] = 2;
    }
    lct::refresh_policy p;
    p.max_overhead = trial % 2 ? 0.02 : 0.001;
    bool const full = book.assess(h, p).refresh;
    agreements += book.needs_refresh(h, p) == full;
    refreshes += full;
    auto const same = lct::codebook::build(t, h);  // a book built for h is within any overhead
    CHECK(!same.needs_refresh(h, p));
  }
  CHECK(agreements == 400);
  CHECK(refreshes > 20);
  CHECK(refreshes < 380);
}
