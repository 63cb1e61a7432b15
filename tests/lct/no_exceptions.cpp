// The lct headers built with -fno-exceptions (lct/config.hpp: a refusal aborts with its message
// there): they compiled only with exceptions (parallel.hpp's try/catch). Round trips of every
// dtype through the threaded encoder and decoder and the container; exit status 0 on success.
#include <cstdint>
#include <cstdio>
#include <span>
#include <vector>
#include <resilin/lct/lct.hpp>

namespace lct = resilin::lct;

int main() {
  std::vector<std::uint32_t> words(50000);
  std::uint64_t s = 12345;
  for (auto& w : words) {  // a fixed xorshift: the bit patterns of every exponent, NaNs included
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    w = static_cast<std::uint32_t>(s);
  }
  lct::encode_options eo;
  eo.chunk_log2 = 10;
  eo.max_threads = 2;
  int failures = 0;
  for (lct::dtype t : {lct::dtype::bf16, lct::dtype::fp16, lct::dtype::fp32}) {
    std::uint64_t const n = t == lct::dtype::fp32 ? words.size() : 2 * words.size();
    lct::encoded_tensor e;
    lct::encode(t, words.data(), n, nullptr, e, eo);
    std::vector<std::uint32_t> back(words.size(), 0);
    lct::decode_container(lct::to_container(e), back.data(), back.size() * 4);
    if (back != words) {
      std::printf("%s: the round trip differs\n", std::string(lct::name(t)).c_str());
      ++failures;
    }
  }
  std::printf("%s\n", failures ? "FAILED" : "lct without exceptions: round trips exact");
  return failures ? 1 : 0;
}
