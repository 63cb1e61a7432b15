#pragma once
// Length-limited optimal prefix code lengths by package-merge (Larmore & Hirschberg).
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include <resilin/lct/error.hpp>

namespace resilin::lct {

/// Optimal code lengths (each <= max_len) for the symbols with weight > 0; zero-weight symbols
/// get length 0. Needs at least two positive weights, 2^max_len >= their number and a sum of
/// weights of at most (2^64 - 1) / (max_len + 1): a package at level l weighs up to l times that
/// sum, and past 2^64 the sums wrapped ({2^64 - 1, 1, 1, 1} gave lengths 1, 12, 12, 11, an
/// incomplete code). codebook::build scales accumulated counts down to 2^58 first.
/// Deterministic: ties are broken by symbol index, leaves before packages.
inline std::vector<std::uint8_t> package_merge(std::span<std::uint64_t const> weights, unsigned max_len) {
  struct item { std::uint64_t w; int sym; };  // sym < 0: a package
  std::vector<item> leaves;
  for (std::size_t s = 0; s < weights.size(); ++s)
    if (weights[s] > 0) leaves.push_back({weights[s], static_cast<int>(s)});
  std::size_t const n = leaves.size();
  if (n < 2 || max_len == 0 || max_len > 30 || (std::uint64_t{1} << max_len) < n)
    RESILIN_LCT_THROW(invalid_argument("package_merge: need 2 <= symbols <= 2^max_len"));
  std::uint64_t const most = UINT64_MAX / (max_len + 1);
  std::uint64_t sum = 0;
  for (item const& leaf : leaves) {
    if (leaf.w > most - sum)
      RESILIN_LCT_THROW(invalid_argument("package_merge: the weights sum past (2^64 - 1) / (max_len + 1) = " +
                                         std::to_string(most) + "; scale them down"));
    sum += leaf.w;
  }
  std::stable_sort(leaves.begin(), leaves.end(), [](item a, item b) { return a.w < b.w; });

  std::vector<std::vector<item>> levels;   // levels[0] = leaves; levels[k] = merge(leaves, pkgs(k-1))
  levels.push_back(leaves);
  for (unsigned l = 1; l < max_len; ++l) {
    auto const& prev = levels.back();
    std::vector<item> pkgs;
    pkgs.reserve(prev.size() / 2);
    for (std::size_t k = 0; k + 1 < prev.size(); k += 2) pkgs.push_back({prev[k].w + prev[k + 1].w, -1});
    std::vector<item> merged;
    merged.reserve(n + pkgs.size());
    std::size_t i = 0, j = 0;
    while (i < n || j < pkgs.size()) {
      if (j == pkgs.size() || (i < n && leaves[i].w <= pkgs[j].w)) merged.push_back(leaves[i++]);
      else merged.push_back(pkgs[j++]);
    }
    levels.push_back(std::move(merged));
  }
  std::vector<std::uint8_t> len(weights.size(), 0);
  std::size_t take = 2 * n - 2;
  for (std::size_t lv = levels.size(); lv-- > 0;) {
    std::size_t packages = 0;
    for (std::size_t k = 0; k < take && k < levels[lv].size(); ++k) {
      if (levels[lv][k].sym >= 0) ++len[static_cast<std::size_t>(levels[lv][k].sym)];
      else ++packages;
    }
    take = 2 * packages;
  }
  return len;
}

}  // namespace resilin::lct
