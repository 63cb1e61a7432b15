// Driver of paired.sh: alternates the two variants ("head" = base, "new") on the same 8 Mi bf16
// N(0, 0.02) weights and prints medians, bests and how often the new encoder won its pair.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

double encode_head(unsigned short const* x, unsigned long n);
double encode_new(unsigned short const* x, unsigned long n);
double decode_head(unsigned short const* x, unsigned long n, unsigned short* y);
double decode_new(unsigned short const* x, unsigned long n, unsigned short* y);

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double best(std::vector<double> const& v) { return *std::min_element(v.begin(), v.end()); }

}  // namespace

int main(int argc, char** argv) {
  int const pairs = argc > 1 ? std::atoi(argv[1]) : 40;
  if (pairs < 1) return 2;
  std::mt19937_64 rng(42);
  std::normal_distribution<float> normal(0, 0.02f);
  std::vector<unsigned short> x(std::size_t{8} << 20), y(x.size());
  for (auto& v : x) {  // bf16 by round to nearest even
    float const f = normal(rng);
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    v = static_cast<unsigned short>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  }
  std::vector<double> eh, en, dh, dn;
  for (int r = 0; r < pairs; ++r) {
    eh.push_back(encode_head(x.data(), x.size()));
    en.push_back(encode_new(x.data(), x.size()));
    dh.push_back(decode_head(x.data(), x.size(), y.data()));
    dn.push_back(decode_new(x.data(), x.size(), y.data()));
  }
  double const mb = 2.0 * static_cast<double>(x.size()) / 1e6;  // MB of bf16 input
  auto report = [&](char const* what, std::vector<double> const& t) {
    std::printf("%s median %.2f ms (%.2f GB/s) best %.2f ms (%.2f GB/s)\n", what, median(t),
                mb / median(t), best(t), mb / best(t));
  };
  report("encode head:", eh);
  report("encode new: ", en);
  report("decode head:", dh);
  report("decode new: ", dn);
  int wins = 0;
  for (int r = 0; r < pairs; ++r) wins += en[static_cast<std::size_t>(r)] < eh[static_cast<std::size_t>(r)];
  std::printf("encode new faster in %d of %d paired runs\n", wins, pairs);
}
