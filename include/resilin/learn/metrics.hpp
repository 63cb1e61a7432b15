#pragma once
// Evaluation: classification accuracy, the adjusted Rand index of two partitions (Hubert &
// Arabie 1985), label encoding, and (from loss.hpp) the barycentre loss.
#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>
#include <resilin/core/config.hpp>
#include <resilin/core/error.hpp>
#include <resilin/learn/loss.hpp>

namespace resilin::learn {

/// The fraction of positions where predicted equals truth (both non-empty, the same size).
inline double accuracy(std::span<std::string const> truth, std::span<std::string const> predicted) {
  resilin::detail::require(truth.size() == predicted.size(), "accuracy: ", truth.size(),
                           " true labels for ", predicted.size(), " predictions");
  resilin::detail::require(!truth.empty(), "accuracy: no labels");
  std::size_t hits = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) hits += truth[i] == predicted[i] ? 1u : 0u;
  return static_cast<double>(hits) / static_cast<double>(truth.size());
}

/// Codes 0, 1, 2, ... in order of first appearance.
inline std::vector<index_t> encode_labels(std::span<std::string const> labels) {
  std::unordered_map<std::string, index_t> code;
  std::vector<index_t> r;
  r.reserve(labels.size());
  for (auto const& l : labels) r.push_back(code.try_emplace(l, static_cast<index_t>(code.size())).first->second);
  return r;
}

/// The adjusted Rand index of two partitions of the same items (any integer codes):
///   (index - expected) / (max - expected), with index = sum_ij C(n_ij, 2),
///   expected = sum_i C(a_i, 2) sum_j C(b_j, 2) / C(n, 2), max = (sum_i C(a_i, 2) + sum_j C(b_j, 2)) / 2,
/// n_ij the contingency table and a, b its margins. 1 for identical partitions (also the
/// degenerate ones where max = expected: both one cluster, or both all singletons).
inline double adjusted_rand_index(std::span<index_t const> a, std::span<index_t const> b) {
  resilin::detail::require(a.size() == b.size(), "adjusted_rand_index: partitions of ", a.size(),
                           " and ", b.size(), " items");
  auto const pairs = [](double k) { return k * (k - 1) / 2; };
  std::map<std::pair<index_t, index_t>, double> table;
  std::map<index_t, double> rows, cols;
  for (std::size_t i = 0; i < a.size(); ++i) {
    table[{a[i], b[i]}] += 1;
    rows[a[i]] += 1;
    cols[b[i]] += 1;
  }
  double index = 0, sum_rows = 0, sum_cols = 0;
  for (auto const& [key, count] : table) index += pairs(count);
  for (auto const& [key, count] : rows) sum_rows += pairs(count);
  for (auto const& [key, count] : cols) sum_cols += pairs(count);
  double const total = pairs(static_cast<double>(a.size()));
  double const expected = total > 0 ? sum_rows * sum_cols / total : 0;
  double const maximum = (sum_rows + sum_cols) / 2;
  if (maximum == expected) return 1.0;
  return (index - expected) / (maximum - expected);
}

}  // namespace resilin::learn
