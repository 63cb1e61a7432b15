// A real trained model's weights (spaCy en_core_web_sm 2.2.5 tagger, see data/README.md):
// fp32 as stored and their bf16 rounding must round-trip and compress close to the bound.
#include <support/catch.hpp>

#include <fstream>
#include <iterator>

#include "test_util.hpp"

using namespace lct_test;

namespace {
std::vector<std::uint32_t> load_weights() {
  std::ifstream f(RESILIN_LCT_TEST_DATA "/spacy_en_core_web_sm_2.2.5_tagger_w31.f32", std::ios::binary);
  std::vector<std::uint8_t> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::uint32_t> w(b.size() / 4);
  std::memcpy(w.data(), b.data(), w.size() * 4);
  return w;
}
}  // namespace

TEST_CASE("trained weights: fp32 and bf16 round trips near the entropy bound", "[lct][model]") {
  auto const w = load_weights();
  REQUIRE(w.size() == 96 * 3 * 288);
  CHECK(round_trip(lct::dtype::fp32, as_bytes(w)));
  std::vector<std::uint16_t> b(w.size());
  for (std::size_t i = 0; i < w.size(); ++i)
    b[i] = static_cast<std::uint16_t>((w[i] + 0x7FFFu + ((w[i] >> 16) & 1u)) >> 16);
  CHECK(round_trip(lct::dtype::bf16, as_bytes(b)));
  for (auto t : {lct::dtype::fp32, lct::dtype::bf16}) {
    lct::encoded_tensor e;
    void const* p = t == lct::dtype::fp32 ? static_cast<void const*>(w.data()) : b.data();
    lct::encode(t, p, w.size(), nullptr, e);
    e.shape = {96, 3, 288};
    double const ratio = static_cast<double>(e.original_bytes()) / static_cast<double>(lct::container_size(e));
    double const bound = lct::ratio_bound(t, lct::entropy_bits(e.exponents));
    INFO(lct::name(t) << ": ratio " << ratio << ", bound " << bound << ", H " << lct::entropy_bits(e.exponents));
    CHECK(ratio >= 0.97 * bound);
    CHECK(ratio > 1.0);
    auto c = lct::to_container(e);
    REQUIRE(lct::parse_container(c).shape == std::vector<std::uint64_t>{96, 3, 288});
  }
}
