#include <support/address_limit.hpp>
#include <support/catch.hpp>

#include <cmath>
#include <limits>

#include "test_util.hpp"

using namespace lct_test;

TEST_CASE("random bit patterns round-trip for every dtype and never grow beyond raw", "[lct][roundtrip]") {
  for (auto t : {lct::dtype::bf16, lct::dtype::fp16, lct::dtype::fp32}) {
    auto bytes = random_bytes(lct::element_bytes(t) * 30001, static_cast<std::uint64_t>(t));
    CHECK(round_trip(t, bytes));
    lct::encoded_tensor e;
    lct::encode(t, bytes.data(), 30001, nullptr, e);
    // every chunk fell back to raw exponents: payload <= raw + chunk table
    CHECK(e.payload_bytes() <= bytes.size() + 8 * e.bits.size() + 4 + 8);
  }
}

TEST_CASE("special values are bit-exact", "[lct][roundtrip]") {
  std::vector<std::uint16_t> b16;
  for (std::uint32_t u = 0; u < 65536; ++u) b16.push_back(static_cast<std::uint16_t>(u));   // every bf16/fp16 pattern
  CHECK(round_trip(lct::dtype::bf16, as_bytes(b16)));
  CHECK(round_trip(lct::dtype::fp16, as_bytes(b16)));
  std::vector<std::uint32_t> f32 = {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x7F800001u,
                                    0xFFFFFFFFu, 0x7FBFFFFFu, 0x00000001u, 0x807FFFFFu, 0x3F800000u, 0x00400000u};
  auto g = gaussian_bf16(5000, 0.02f, 5);
  for (auto v : g) f32.push_back(std::uint32_t{v} << 16 | (v * 2654435761u >> 16));   // NaN-free bulk
  CHECK(round_trip(lct::dtype::fp32, as_bytes(f32)));
}

TEST_CASE("empty, one-element and chunk-boundary sizes", "[lct][roundtrip]") {
  for (auto t : {lct::dtype::bf16, lct::dtype::fp16, lct::dtype::fp32}) {
    for (unsigned lg : {10u, 13u}) {
      std::uint64_t const K = std::uint64_t{1} << lg;
      for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{8}, K - 1, K, K + 1,
                              4 * K - 1, 4 * K, 4 * K + 1, 5 * K + 3}) {
        auto g = gaussian_bf16(n * 2, 0.05f, n + lg);
        std::vector<std::uint8_t> bytes(n * lct::element_bytes(t));
        if (!bytes.empty()) std::memcpy(bytes.data(), g.data(), bytes.size());
        if (t == lct::dtype::fp16)   // make fp16 exponents realistic: reuse the bf16 top bits
          for (std::uint64_t i = 0; i < n; ++i) { bytes[2 * i + 1] = static_cast<std::uint8_t>((g[i] >> 8) ^ 0x30); }
        lct::encode_options eo;
        eo.chunk_log2 = lg;
        INFO("dtype " << lct::name(t) << " K " << K << " n " << n);
        CHECK(round_trip(t, bytes, nullptr, eo));
      }
    }
  }
}

TEST_CASE("stale codebooks escape heavily and still round-trip", "[lct][roundtrip]") {
  // a book from a narrow distribution applied to uniform random bits: most symbols escape
  auto narrow = gaussian_bf16(20000, 0.02f, 6);
  auto book = lct::codebook::from_sample(lct::dtype::bf16, narrow.data(), narrow.size());
  auto wide = random_bytes(2 * 50000, 7);
  lct::encoded_tensor e;
  lct::encode(lct::dtype::bf16, wide.data(), 50000, &book, e);
  REQUIRE(e.escapes() > 25000);
  CHECK(round_trip(lct::dtype::bf16, wide, &book));
  // partially stale: a 2x wider Gaussian plus Inf/NaN sprinkled in
  auto g = gaussian_bf16(100000, 0.5f, 8);
  for (std::size_t i = 0; i < g.size(); i += 97) g[i] = static_cast<std::uint16_t>(0x7F80u | (i & 0x807Fu));
  lct::encode(lct::dtype::bf16, g.data(), g.size(), &book, e);
  REQUIRE(e.escapes() > 0);
  CHECK(round_trip(lct::dtype::bf16, as_bytes(g), &book));
  // fp16 / fp32 books
  for (auto t : {lct::dtype::fp16, lct::dtype::fp32}) {
    auto s = random_bytes(lct::element_bytes(t) * 3000, 9);
    for (std::size_t i = 0; i < s.size(); ++i)
      s[i] = static_cast<std::uint8_t>(s[i] & ((i % lct::element_bytes(t) == lct::element_bytes(t) - 1u) ? 0x3C : 0xFF));
    auto b = lct::codebook::from_sample(t, s.data(), 3000);
    auto r = random_bytes(lct::element_bytes(t) * 20000, 10);
    CHECK(round_trip(t, r, &b));
  }
}

TEST_CASE("threads do not change the bytes", "[lct][roundtrip]") {
  // > 2^20 elements: one worker takes the paired-exponent histogram path (>= 2^19 per worker),
  // four workers the single-exponent path; both must give the same book and bytes.
  auto g = gaussian_bf16((1 << 20) + 12345, 0.02f, 11);
  lct::encode_options one, many;
  one.max_threads = 1;
  many.max_threads = 4;
  lct::encoded_tensor a, b;
  lct::encode(lct::dtype::bf16, g.data(), g.size(), nullptr, a, one);
  lct::encode(lct::dtype::bf16, g.data(), g.size(), nullptr, b, many);
  REQUIRE(lct::to_container(a) == lct::to_container(b));
  lct::decode_options d4;
  d4.max_threads = 3;
  CHECK(round_trip(lct::dtype::bf16, as_bytes(g), nullptr, many, d4));
}

#if RESILIN_TEST_ADDRESS_LIMIT
TEST_CASE("threads that cannot be started: the calling thread runs their slices", "[lct][roundtrip]") {
  // room for about two thread stacks: the std::thread vector was destroyed with threads running
  // and std::terminate ended the process
  auto const g = gaussian_bf16(1 << 20, 0.02f, 5);
  lct::encode_options many;
  many.max_threads = 64;
  many.chunk_log2 = 10;
  lct::encoded_tensor unlimited;
  lct::encode(lct::dtype::bf16, g.data(), g.size(), nullptr, unlimited, many);
  int const code = resilin_test::under_address_limit(24, [&] {
    lct::encoded_tensor limited;
    lct::encode(lct::dtype::bf16, g.data(), g.size(), nullptr, limited, many);
    return lct::to_container(limited) == lct::to_container(unlimited) ? 0 : 1;
  });
  CHECK((code == 0 || code == 2));  // 2: an allocation of the encoder's own failed, not the defect
}
#endif

TEST_CASE("Gaussian bf16 weights reach the entropy bound within 3%", "[lct][ratio]") {
  for (float sigma : {0.02f, 0.1f, 1.0f}) {
    auto g = gaussian_bf16(1 << 20, sigma, 12);
    lct::encoded_tensor e;
    lct::encode(lct::dtype::bf16, g.data(), g.size(), nullptr, e);
    double const ratio = static_cast<double>(g.size() * 2) / static_cast<double>(lct::container_size(e));
    double const bound = lct::ratio_bound(lct::dtype::bf16, lct::entropy_bits(e.exponents));
    INFO("sigma " << sigma << " ratio " << ratio << " bound " << bound);
    CHECK(ratio >= 0.97 * bound);
    CHECK(ratio <= bound);
    CHECK(ratio > 1.45);
  }
}

TEST_CASE("compressed_tensor before its first encode has no contents", "[lct][tensor]") {
  for (lct::dtype t : {lct::dtype::bf16, lct::dtype::fp16, lct::dtype::fp32}) {
    lct::compressed_tensor ct(t);
    REQUIRE(ct.size() == 0);
    REQUIRE(ct.original_bytes() == 0);
    REQUIRE(ct.compressed_bytes() == 0);  // was the size of a container that could not be written
    REQUIRE(ct.ratio() == 0.0);
    REQUIRE(ct.encoded().type == t);
    std::vector<std::uint8_t> out(16);
    REQUIRE_THROWS_WITH(ct.decode_to_scratch(), Catch::Matchers::Contains("nothing encoded yet"));
    REQUIRE_THROWS_WITH(ct.decode_into(out.data(), out.size()), Catch::Matchers::Contains("nothing encoded yet"));
    REQUIRE_THROWS_WITH(ct.to_container(), Catch::Matchers::Contains("nothing encoded yet"));
    // an encode of nothing is contents: an empty tensor, written and read back
    ct.encode(nullptr, 0);
    REQUIRE(ct.decode_to_scratch().empty());
    auto const c = ct.to_container();
    REQUIRE(c.size() == ct.compressed_bytes());
    REQUIRE(lct::parse_container(c).count == 0);
    // and it does not fix the book: the next encode with data builds a fresh one (the empty
    // tensor's book, the escape alone, made it escape about 70 % of N(0, 1) values)
    REQUIRE(ct.current_codebook().empty());
  }
  lct::compressed_tensor ct(lct::dtype::bf16);
  ct.encode(nullptr, 0);
  auto const w = gaussian_bf16(50000, 1.0f, 21);
  ct.encode(std::span<std::uint16_t const>(w));
  CHECK(ct.escape_rate() < 1e-3);
  CHECK(ct.ratio() > 1.2);
}

TEST_CASE("compressed_tensor reuses its book, refreshes on drift, decodes into caller buffers", "[lct][tensor]") {
  lct::compressed_tensor ct(lct::dtype::bf16);
  auto w0 = gaussian_bf16(200000, 0.02f, 13);
  ct.encode(std::span<std::uint16_t const>(w0));
  REQUIRE(ct.size() == w0.size());
  REQUIRE(ct.ratio() > 1.45);
  std::vector<std::uint16_t> out(w0.size());
  ct.decode_into(std::span(out));
  REQUIRE(out == w0);
  auto const id0 = ct.current_codebook().id();
  // a scaled copy (weight decay / LR change): modal keying keeps the book valid
  auto w1 = gaussian_bf16(200000, 0.005f, 14);
  ct.encode(std::span<std::uint16_t const>(w1));
  REQUIRE(ct.refreshes() == 0);
  REQUIRE(ct.escape_rate() < 1e-3);
  auto s = ct.decode_to_scratch();
  REQUIRE(std::memcmp(s.data(), w1.data(), s.size()) == 0);
  // a very different distribution: heavy escapes -> the book is refreshed for the next encode
  auto w2 = random_bytes(2 * 200000, 15);
  ct.encode(w2.data(), 200000);
  REQUIRE(ct.escape_rate() > 0.5);
  REQUIRE(ct.refreshes() == 1);
  REQUIRE(ct.current_codebook().id() == id0 + 1);
  ct.decode_into(out.data(), out.size() * 2);
  REQUIRE(std::memcmp(out.data(), w2.data(), w2.size()) == 0);
  REQUIRE_THROWS_AS(ct.decode_into(out.data(), 10), lct::invalid_argument);
}

TEST_CASE("compressed_tensor notices drift as soon after a long steady run as after a short one",
          "[lct][tensor]") {
  // the same bulk, then 5 % outliers far outside the book (a loss-scale spike): with the
  // statistics summed since the last refresh, the refresh came after 1, 21 and 204 encodes of the
  // new data when the old had run for 10, 1000 and 10000
  auto const a = gaussian_bf16(4096, 0.02f, 31);
  auto b = gaussian_bf16(4096, 0.02f, 32);
  auto const spikes = gaussian_bf16(4096, 2e4f, 33);
  for (std::size_t i = 0; i < b.size(); i += 20) b[i] = spikes[i];
  for (int history : {10, 1000}) {
    INFO(history << " encodes of the old data");
    lct::compressed_tensor::options o;
    o.encode.max_threads = 1;
    lct::compressed_tensor ct(lct::dtype::bf16, o);
    for (int k = 0; k < history; ++k) ct.encode(std::span<std::uint16_t const>(a));
    REQUIRE(ct.refreshes() == 0);
    ct.encode(std::span<std::uint16_t const>(b));
    CHECK(ct.escape_rate() > 0.01);
    CHECK(ct.refreshes() == 1);
    ct.encode(std::span<std::uint16_t const>(b));  // the new book covers the new data
    CHECK(ct.escape_rate() < 1e-3);
  }
}

TEST_CASE("buffers not aligned to the element size are refused", "[lct][roundtrip]") {
  // the codecs load whole elements: a byte-offset buffer was read and written through misaligned
  // 16- and 32-bit accesses (undefined behaviour, reported by UBSan)
  std::vector<std::uint32_t> words(1001, 0x3F800000u);  // 1.0f
  auto* const bytes = reinterpret_cast<unsigned char*>(words.data());
  for (lct::dtype t : {lct::dtype::bf16, lct::dtype::fp16, lct::dtype::fp32}) {
    lct::encoded_tensor enc;
    REQUIRE_THROWS_AS(lct::encode(t, bytes + 1, 1000, nullptr, enc), lct::invalid_argument);
    lct::histogram h{};
    REQUIRE_THROWS_AS(lct::accumulate_histogram(t, bytes + 1, 1000, h), lct::invalid_argument);
    lct::encode(t, bytes, 1000, nullptr, enc);
    REQUIRE_THROWS_AS(lct::decode(enc.view(), bytes + 1, 1000 * lct::element_bytes(t)), lct::invalid_argument);
    lct::decode(enc.view(), bytes + 4, 1000 * lct::element_bytes(t));  // aligned: decodes
  }
}
