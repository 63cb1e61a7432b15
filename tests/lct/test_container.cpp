#include <support/catch.hpp>

#include <array>
#include <span>

#include "test_util.hpp"

using namespace lct_test;

namespace {
std::vector<std::uint8_t> sample_container(lct::dtype t, std::uint64_t n, std::uint64_t seed) {
  auto g = gaussian_bf16(2 * n, 0.03f, seed);
  lct::encode_options eo;
  eo.chunk_log2 = 10;
  lct::encoded_tensor e;
  lct::encode(t, g.data(), n, nullptr, e, eo);
  return lct::to_container(e);
}
}  // namespace

TEST_CASE("every truncation is refused", "[lct][container]") {
  auto c = sample_container(lct::dtype::bf16, 3000, 1);
  std::vector<std::uint16_t> out(3000);
  for (std::size_t cut = 0; cut < c.size(); ++cut) {
    INFO("cut " << cut);
    REQUIRE_THROWS_AS(lct::decode_container(std::span(c.data(), cut), out.data(), out.size() * 2), lct::format_error);
  }
  REQUIRE_NOTHROW(lct::decode_container(c, out.data(), out.size() * 2));
}

TEST_CASE("decode_container reports what it decoded, and the typed form refuses another type or count",
          "[lct][container]") {
  // a buffer for 2000 bf16 values took 1000 fp32 ones, or 10 bf16 ones with the rest left as it
  // was, without a word
  auto const fp32 = sample_container(lct::dtype::fp32, 1000, 4);
  auto const bf16 = sample_container(lct::dtype::bf16, 10, 5);
  std::vector<std::uint16_t> out(2000, 0xaaaa);
  auto const got = lct::decode_container(fp32, out.data(), out.size() * 2);
  CHECK(got.type == lct::dtype::fp32);
  CHECK(got.count == 1000);
  CHECK(lct::decode_container(bf16, out.data(), out.size() * 2).count == 10);
  CHECK_THROWS_WITH(lct::decode_container(fp32, lct::dtype::bf16, 2000, out.data()),
                    Catch::Contains("the container holds 1000 fp32 values, expected 2000 bf16"));
  CHECK_THROWS_WITH(lct::decode_container(bf16, lct::dtype::bf16, 2000, out.data()),
                    Catch::Contains("holds 10 bf16 values, expected 2000 bf16"));
  CHECK_THROWS_AS(lct::decode_container(bf16, lct::dtype::bf16, 2000, out.data()), lct::invalid_argument);
  std::vector<std::uint16_t> exact(10);
  lct::decode_container(bf16, lct::dtype::bf16, 10, exact.data());
  CHECK(std::equal(exact.begin(), exact.end(), out.begin()));
}

TEST_CASE("every single-bit flip is detected", "[lct][container]") {
  auto c = sample_container(lct::dtype::fp16, 2500, 2);
  std::vector<std::uint16_t> out(2500);
  for (std::size_t i = 0; i < c.size(); ++i) {
    auto bad = c;
    bad[i] ^= static_cast<std::uint8_t>(1u << (i % 8));
    INFO("byte " << i);
    REQUIRE_THROWS_AS(lct::decode_container(bad, out.data(), out.size() * 2), lct::format_error);
  }
}

TEST_CASE("structural checks hold without the checksum", "[lct][container]") {
  // mutate fields with the checksum disabled: decoding must either refuse with a format_error
  // or produce output (never crash or read out of bounds; run under ASan/UBSan)
  auto c = sample_container(lct::dtype::bf16, 5000, 3);
  std::vector<std::uint16_t> out(5000);
  lct::parse_options p;
  p.verify_checksum = false;
  std::mt19937_64 rng(3);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    auto bad = c;
    int const flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] = static_cast<std::uint8_t>(rng());
    try {
      lct::decode_container(bad, out.data(), out.size() * 2, {}, p);
    } catch (lct::format_error const&) {
      ++refused;
    } catch (lct::invalid_argument const&) {
      ++refused;
    }
  }
  REQUIRE(refused > 0);
  // a wrong element count in the header is caught by the section-size check
  auto bad = c;
  bad[16] ^= 1;
  REQUIRE_THROWS_AS(lct::parse_container(bad, p), lct::format_error);
  // a chunk table pointing outside the stream
  auto e = lct::parse_container(c);
  REQUIRE(e.offsets.size() > 2);
}

TEST_CASE("errors name the failing field", "[lct][container]") {
  auto c = sample_container(lct::dtype::bf16, 100, 4);
  auto bad = c;
  bad[8] = 9;   // version
  REQUIRE_THROWS_WITH(lct::parse_container(bad), Catch::Matchers::Contains("version 9"));
  bad = c;
  bad[0] = 0;
  REQUIRE_THROWS_WITH(lct::parse_container(bad), Catch::Matchers::Contains("magic"));
  bad = c;
  bad.back() ^= 1;
  REQUIRE_THROWS_WITH(lct::parse_container(bad), Catch::Matchers::Contains("XXH64"));
  try {
    lct::parse_container(std::span(c.data(), 20));
    FAIL("truncated input accepted");
  } catch (lct::format_error const& err) {
    REQUIRE(err.code() == lct::errc::truncated);
  }
  // cut to fewer bytes than the count of elements: truncated too (it was reported as corrupt)
  for (std::size_t keep : {std::size_t{60}, c.size() / 2}) {
    INFO("kept " << keep << " of " << c.size() << " bytes");
    try {
      lct::parse_container(std::span(c.data(), keep));
      FAIL("truncated input accepted");
    } catch (lct::format_error const& err) {
      CHECK(err.code() == lct::errc::truncated);
      CHECK_THAT(err.what(), Catch::Matchers::Contains("truncated"));
    }
  }
}

TEST_CASE("a reused encoded_tensor does not keep the previous tensor's shape", "[lct][container]") {
  auto const g = gaussian_bf16(8, 0.03f, 3);
  lct::encoded_tensor e;
  lct::encode(lct::dtype::bf16, g.data(), 6, nullptr, e);
  e.shape = {2, 3};
  REQUIRE(lct::parse_container(lct::to_container(e)).shape == std::vector<std::uint64_t>{2, 3});
  // a new tensor of another count: written as {count}, not refused for the stale shape
  lct::encode(lct::dtype::bf16, g.data(), 8, nullptr, e);
  CHECK(e.shape.empty());
  CHECK(lct::parse_container(lct::to_container(e)).shape == std::vector<std::uint64_t>{8});
  // and of the same count: {count}, not the previous tensor's {2, 3}
  lct::encode(lct::dtype::bf16, g.data(), 6, nullptr, e);
  CHECK(lct::parse_container(lct::to_container(e)).shape == std::vector<std::uint64_t>{6});
}

TEST_CASE("the writer and the reader agree on shapes", "[lct][container]") {
  lct::encoded_tensor e;
  lct::encode(lct::dtype::bf16, nullptr, 0, nullptr, e);
  // a zero dimension makes the product 0 whatever the others are (2^63 * 2 would overflow)
  e.shape = {std::uint64_t(1) << 63, 2, 0};
  auto const c = lct::to_container(e);
  REQUIRE(lct::parse_container(c).shape == e.shape);
  // a product that wraps around to the count is refused when written, not only when read
  auto g = gaussian_bf16(2 * 4, 0.03f, 7);
  lct::encode(lct::dtype::bf16, g.data(), 4, nullptr, e);
  e.shape = {std::uint64_t(1) << 62, 4, 2};  // 2^65 = 0 mod 2^64, and 4 != 0 anyway
  REQUIRE_THROWS_AS(lct::to_container(e), lct::invalid_argument);
  e.shape = {(std::uint64_t(1) << 62) + 1, 4};  // 2^64 + 4 = 4 mod 2^64: the count
  REQUIRE_THROWS_AS(lct::to_container(e), lct::invalid_argument);
  e.shape = {2, 2};
  REQUIRE(lct::parse_container(lct::to_container(e)).shape == e.shape);
}

TEST_CASE("the writer refuses what the reader would refuse", "[lct][container]") {
  auto const throws_with = [](lct::encoded_tensor const& e, char const* what) {
    REQUIRE_THROWS_WITH(lct::to_container(e), Catch::Matchers::Contains(what));
  };
  // nothing encoded: no codebook (it used to write 53 bytes that parse_container refused)
  lct::encoded_tensor e;
  throws_with(e, "to_container: missing codebook");
  auto g = gaussian_bf16(2 * 3000, 0.03f, 8);
  lct::encode_options eo;
  eo.chunk_log2 = 10;
  lct::encode(lct::dtype::bf16, g.data(), 3000, nullptr, e, eo);
  REQUIRE(lct::parse_container(lct::to_container(e)).count == 3000);
  {
    lct::encoded_tensor bad = e;
    bad.type = lct::dtype::fp16;  // the book is bf16's
    throws_with(bad, "codebook of another dtype");
  }
  {
    lct::encoded_tensor bad = e;
    bad.raw.pop_back();
    throws_with(bad, "to_container: the raw plane (bytes) has 2999, expected 3000 for 3000 elements");
  }
  {
    lct::encoded_tensor bad = e;
    bad.count += 1;
    throws_with(bad, "expected 3001 for 3001 elements");
  }
  {
    lct::encoded_tensor bad = e;
    bad.stream.resize(bad.stream.size() + 4);
    throws_with(bad, "the exponent stream (bytes) has ");
  }
  {
    lct::encoded_tensor bad = e;
    bad.shape = {3, 7};
    throws_with(bad, "to_container: shape {3, 7} does not multiply to the element count 3000");
  }
  // every refusal names the value: the dtypes of a mismatched book, an invalid dtype's number
  lct::compressed_tensor ct(lct::dtype::bf16);
  REQUIRE_THROWS_WITH(ct.set_codebook(lct::codebook::build(lct::dtype::fp16, lct::histogram{})),
                      "lct: invalid argument: compressed_tensor: codebook is for fp16, the tensor is bf16");
  REQUIRE_THROWS_WITH(lct::compressed_tensor(static_cast<lct::dtype>(7)), Catch::Matchers::Contains("compressed_tensor: invalid dtype 7"));
  REQUIRE_THROWS_WITH(lct::encode(static_cast<lct::dtype>(7), g.data(), 10, nullptr, e), Catch::Matchers::Contains("encode: invalid dtype 7"));
  {
    lct::encoded_tensor bad = e;
    bad.key_ref = 256;
    throws_with(bad, "key_ref 256");
  }
  {
    lct::encoded_tensor bad = e;
    bad.chunk_log2 = 40;
    throws_with(bad, "chunk_log2 40");
  }
  {
    lct::encoded_tensor bad = e;
    bad.bits[1] = 1;  // one bit cannot hold the chunk's 1024 codes
    REQUIRE_THROWS_AS(lct::to_container(bad), lct::format_error);
  }
}

namespace {
template <class R>
concept parses = requires(R&& r) { lct::parse_container(std::forward<R>(r)); };
}  // namespace

TEST_CASE("a container parsed from a temporary keeps its bytes; other temporaries do not compile",
          "[lct][container]") {
  // parse_container(to_container(e)) left raw and stream pointing into freed memory, which a
  // decode then read (AddressSanitizer: heap-use-after-free)
  auto const g = gaussian_bf16(2 * 4096, 0.03f, 11);
  lct::encoded_tensor e;
  lct::encode(lct::dtype::bf16, g.data(), 4096, nullptr, e);
  lct::container const c = lct::parse_container(lct::to_container(e));
  REQUIRE(c.storage != nullptr);
  CHECK(c.raw.data() >= c.storage->data());
  CHECK(c.stream.data() + c.stream.size() <= c.storage->data() + c.storage->size());
  lct::container const copy = c;  // copies share the bytes
  std::vector<std::uint16_t> out(4096);
  lct::decode(copy.view(), out.data(), out.size() * 2);
  CHECK(std::equal(out.begin(), out.end(), g.begin()));
  // named buffers and views parse as before; other temporaries are refused
  STATIC_REQUIRE(parses<std::vector<std::uint8_t>&>);
  STATIC_REQUIRE(parses<std::vector<std::uint8_t>>);
  STATIC_REQUIRE(parses<std::span<std::uint8_t const>>);
  STATIC_REQUIRE(!parses<std::array<std::uint8_t, 64>>);
  STATIC_REQUIRE(!parses<std::vector<std::uint8_t> const>);
}

TEST_CASE("decoding into a buffer that overlaps the encoded bytes is refused", "[lct][container]") {
  // in-place decompression wrote the output over the sections it was reading: 7139 of 10000
  // bf16 bytes (12153 of 20000 fp32 ones) came back wrong, without an error
  for (auto t : {lct::dtype::bf16, lct::dtype::fp32}) {
    auto const c = sample_container(t, 5000, 12);
    std::uint64_t const out_bytes = 5000 * lct::element_bytes(t);
    std::vector<std::uint32_t> buf((c.size() + out_bytes) / 4 + 2);  // 4-byte aligned
    auto* const bytes = reinterpret_cast<std::uint8_t*>(buf.data());
    std::copy(c.begin(), c.end(), bytes);
    std::span<std::uint8_t const> const in(bytes, c.size());
    CHECK_THROWS_WITH(lct::decode_container(in, bytes, out_bytes),
                      Catch::Contains("the output overlaps the encoded"));
    lct::container const p = lct::parse_container(in);
    CHECK_THROWS_WITH(lct::decode(p.view(), bytes + c.size() / 8 * 4, out_bytes),
                      Catch::Contains("the output overlaps the encoded"));
    // right after the input: fine, and the same as into a separate buffer
    std::vector<std::uint8_t> separate(out_bytes);
    lct::decode(p.view(), separate.data(), out_bytes);
    std::uint8_t* const after = bytes + (c.size() + 3) / 4 * 4;
    lct::decode(p.view(), after, out_bytes);
    CHECK(std::equal(separate.begin(), separate.end(), after));
  }
}
