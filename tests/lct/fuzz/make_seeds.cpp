// Writes a small seed corpus of valid containers (and a codebook) into argv[1].
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <resilin/lct/lct.hpp>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  namespace lct = resilin::lct;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.0f, 0.05f);
  int k = 0;
  auto put = [&](std::vector<std::uint8_t> const& b, std::uint8_t flag) {
    std::ofstream f(std::string(argv[1]) + "/seed" + std::to_string(k++), std::ios::binary);
    f.put(static_cast<char>(flag));
    f.write(reinterpret_cast<char const*>(b.data()), static_cast<std::streamsize>(b.size()));
  };
  for (auto t : {lct::dtype::bf16, lct::dtype::fp16, lct::dtype::fp32}) {
    for (std::uint64_t n : {0u, 1u, 37u, 1500u}) {
      std::vector<std::uint8_t> x(n * lct::element_bytes(t));
      for (std::size_t i = 0; i + 1 < x.size(); i += 2) {
        float f = nd(rng);
        std::uint32_t u;
        std::memcpy(&u, &f, 4);
        x[i] = static_cast<std::uint8_t>(u >> 16);
        x[i + 1] = static_cast<std::uint8_t>(u >> 24);
      }
      lct::encoded_tensor e;
      lct::encode_options o;
      o.chunk_log2 = 10;
      lct::encode(t, x.data(), n, nullptr, e, o);
      auto c = lct::to_container(e);
      put(c, 1);
      put(c, 0);
      if (n == 37) put(e.book.serialize(), 0);
    }
  }
  return 0;
}
