// Driver of paired.sh: alternates the two variants ("head" = base, "new") and prints medians,
// bests and how often the new encoder won its pair.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <random>
#include <vector>
double encode_head(unsigned short const*, unsigned long); double encode_new(unsigned short const*, unsigned long);
double decode_head(unsigned short const*, unsigned long, unsigned short*); double decode_new(unsigned short const*, unsigned long, unsigned short*);
int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 40;
  std::mt19937_64 rng(42); std::normal_distribution<float> nd(0, 0.02f);
  std::vector<unsigned short> x(8 << 20), y(8 << 20);
  for (auto& v : x) { float f = nd(rng); uint32_t u; memcpy(&u, &f, 4); v = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16; }
  std::vector<double> eh, en, dh, dn;
  for (int r = 0; r < reps; ++r) { eh.push_back(encode_head(x.data(), x.size())); en.push_back(encode_new(x.data(), x.size()));
                                   dh.push_back(decode_head(x.data(), x.size(), y.data())); dn.push_back(decode_new(x.data(), x.size(), y.data())); }
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  auto mn = [](std::vector<double> v) { return *std::min_element(v.begin(), v.end()); };
  double const mb = 16.777216;  // MB of bf16 input
  printf("encode head: median %.2f ms (%.2f GB/s) best %.2f ms (%.2f GB/s)\n", med(eh), mb / med(eh), mn(eh), mb / mn(eh));
  printf("encode new:  median %.2f ms (%.2f GB/s) best %.2f ms (%.2f GB/s)\n", med(en), mb / med(en), mn(en), mb / mn(en));
  printf("decode head: median %.2f ms (%.2f GB/s) best %.2f ms\n", med(dh), mb / med(dh), mn(dh));
  printf("decode new:  median %.2f ms (%.2f GB/s) best %.2f ms\n", med(dn), mb / med(dn), mn(dn));
  int wins = 0; for (int r = 0; r < reps; ++r) wins += en[r] < eh[r]; printf("encode new faster in %d of %d paired runs\n", wins, reps);
}
