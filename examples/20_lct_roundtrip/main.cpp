// 20_lct_roundtrip: compress bf16 weights losslessly, write/read the container, decode, and
// keep re-encoding a tensor across "training steps" with one compressed_tensor object.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include <resilin/lct/lct.hpp>

namespace lct = resilin::lct;

static std::uint16_t to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

int main() {
  std::mt19937_64 rng(2026);
  std::normal_distribution<float> nd(0.0f, 0.02f);
  std::vector<std::uint16_t> w(1 << 20);
  for (auto& v : w) v = to_bf16(nd(rng));

  // example-begin lct-roundtrip
  lct::encoded_tensor enc;
  lct::encode(lct::dtype::bf16, w.data(), w.size(), nullptr, enc);          // fresh per-tensor book
  std::vector<std::uint8_t> file = lct::to_container(enc);                  // magic, shape, book, xxHash
  lct::container parsed = lct::parse_container(file);                       // validates every field
  std::vector<std::uint16_t> back(parsed.count);
  lct::decode(parsed.view(), back.data(), back.size() * sizeof(std::uint16_t));
  // example-end lct-roundtrip
  if (back != w) { std::puts("round trip FAILED"); return 1; }
  double const H = lct::entropy_bits(enc.exponents);
  std::printf("bf16 N(0, 0.02), %zu elements: %zu -> %zu bytes, ratio %.4f (bound %.4f, H = %.3f bits)\n",
              w.size(), w.size() * 2, file.size(), 2.0 * static_cast<double>(w.size()) / static_cast<double>(file.size()),
              lct::ratio_bound(lct::dtype::bf16, H), H);

  // example-begin lct-steps
  lct::compressed_tensor t(lct::dtype::bf16);      // owns its storage, reuses it every step
  std::vector<std::uint16_t> scratch(w.size());
  for (int step = 0; step < 5; ++step) {
    for (auto& v : w) v = to_bf16(std::ldexp(nd(rng), -step));   // weights shrink: modal keying adapts
    t.encode(std::span<std::uint16_t const>(w));
    t.decode_into(std::span(scratch));
    if (scratch != w) { std::puts("step round trip FAILED"); return 1; }
    std::printf("step %d: ratio %.4f, escape rate %.5f, book id %u, refreshes %llu\n", step, t.ratio(),
                t.escape_rate(), t.current_codebook().id(), static_cast<unsigned long long>(t.refreshes()));
  }
  // example-end lct-steps
  return 0;
}
