#pragma once
// Naive, independent oracles for the alignment tests and the benchmark baseline, written from
// the mathematics (spec/softdtw.md §3; Cuturi & Blondel 2017, Algorithms 1 and 2), not from
// the library code. Nothing here includes resilin: the oracles must not share a bug with it.
//
//   (a) soft_dtw_value / soft_dtw_value_and_grad: the straightforward loop. Full (n+1) x (m+1)
//       table R, std::exp / std::log per cell, 3-term max-shifted log-sum-exp exactly as in
//       Blondel's Cython (`sdtw/soft_dtw_fast.pyx: _softmin3`), E by Algorithm 2 (full
//       (n+2) x (m+2) tables), gradients G_X[i] = sum_j E_ij d delta(x_i, y_j) / d x_i.
//   (b) brute_force: enumerate every monotone alignment path (n, m <= ~6) and evaluate
//       -gamma log sum exp(-cost / gamma), E = sum softmax * A, or the hard minimum.
//   (c) hard_dtw_value: plain DTW by the min recursion.
// All take raw row-major pointers: x is (n, d), y is (m, d).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace resilin_test::reference {

using index = std::int64_t;

/// The point distance delta(a, b) over d channels.
enum class point_cost { squared_euclidean, half_squared_euclidean, l1 };

template <class T>
T distance(point_cost c, T const* a, T const* b, index d) {
  T s = T(0);
  for (index k = 0; k < d; ++k) {
    T const diff = a[k] - b[k];
    switch (c) {
      case point_cost::squared_euclidean: s += diff * diff; break;
      case point_cost::half_squared_euclidean: s += T(0.5) * diff * diff; break;
      case point_cost::l1: s += std::abs(diff); break;
    }
  }
  return s;
}

/// d delta(a, b) / d a_k (the partial with respect to b_k is its negative). L1: sign, 0 at a tie.
template <class T>
T distance_partial(point_cost c, T a, T b) {
  switch (c) {
    case point_cost::squared_euclidean: return T(2) * (a - b);
    case point_cost::half_squared_euclidean: return a - b;
    case point_cost::l1: return a > b ? T(1) : (a < b ? T(-1) : T(0));
  }
  return T(0);
}

/// A cell mask (n * m, row-major, 1 = allowed). An empty mask allows every cell.
struct mask {
  index n = 0, m = 0;
  std::vector<unsigned char> allowed;  // empty: no band
  bool operator()(index i, index j) const {
    return allowed.empty() || allowed[static_cast<std::size_t>(i * m + j)] != 0;
  }
};

/// The Sakoe-Chiba band as documented in include/resilin/core/band.hpp, written from its prose:
/// cell (i, j) is inside when |i (m-1) - j (n-1)| <= R_eff * max(n-1, m-1), with R_eff = 1 when
/// n != m and R = 0, else R; radius < 0 means no band. For n = m this is |i - j| <= R.
inline mask sakoe_chiba(index n, index m, index radius) {
  mask k{n, m, {}};
  if (radius < 0) return k;
  index const r = (n != m && radius == 0) ? 1 : radius;
  index const w = r * std::max(n - 1, m - 1);
  k.allowed.assign(static_cast<std::size_t>(n * m), 0);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < m; ++j) {
      index const t = i * (m - 1) - j * (n - 1);
      k.allowed[static_cast<std::size_t>(i * m + j)] = (t < 0 ? -t : t) <= w ? 1 : 0;
    }
  return k;
}

/// The Itakura band as documented in include/resilin/core/band.hpp, written from its prose, cell
/// by cell: with a = i (m-1), b = j (n-1), N = (n-1)(m-1) and the slope s = scaled / scale, a
/// cell is inside when b <= s a, a <= s b, N - b <= s (N - a) and N - a <= s (N - b) (each
/// times scale, in 128-bit integers), or when sakoe_chiba(n, m, 0) holds it. No band when n or m
/// is 1.
inline mask itakura(index n, index m, std::int64_t scaled, std::int64_t scale) {
  mask k{n, m, {}};
  if (n <= 1 || m <= 1) return k;
  k = sakoe_chiba(n, m, 0);
  __extension__ typedef __int128 wide;
  wide const P = scaled, Q = scale, N = wide(n - 1) * wide(m - 1);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < m; ++j) {
      wide const a = wide(i) * wide(m - 1), b = wide(j) * wide(n - 1);
      if (Q * b <= P * a && Q * a <= P * b && Q * (N - b) <= P * (N - a) && Q * (N - a) <= P * (N - b))
        k.allowed[static_cast<std::size_t>(i * m + j)] = 1;
    }
  return k;
}

/// The UCR "window" convention: R = ceil(f * max(n, m)).
inline index window_radius(index thousandths, index n, index m) {
  index const longest = std::max(n, m);
  return (thousandths * longest + 999) / 1000;  // exact: ceil(thousandths / 1000 * longest)
}

// --- (a) the straightforward soft-DTW -------------------------------------------------------

/// Blondel's _softmin3: -gamma * log(sum exp(-v / gamma)), max-shifted; +inf when all are +inf.
template <class T>
T softmin3(T a, T b, T c, T gamma) {
  a /= -gamma;
  b /= -gamma;
  c /= -gamma;
  T const max_val = std::max(std::max(a, b), c);
  if (max_val == -std::numeric_limits<T>::infinity()) return std::numeric_limits<T>::infinity();
  T tmp = T(0);
  tmp += std::exp(a - max_val);
  tmp += std::exp(b - max_val);
  tmp += std::exp(c - max_val);
  return -gamma * (std::log(tmp) + max_val);
}

/// Algorithm 1 on a full (n+1) x (m+1) table (row stride m+1); R(0,0) = 0, borders +inf.
/// Cells outside the mask stay +inf. gamma == 0 selects the hard minimum.
template <class T>
std::vector<T> forward_table(T const* x, T const* y, index n, index m, index d, T gamma,
                             point_cost cost, mask const* band) {
  T const inf = std::numeric_limits<T>::infinity();
  index const s = m + 1;
  std::vector<T> R(static_cast<std::size_t>((n + 1) * s), inf);
  R[0] = T(0);
  for (index i = 1; i <= n; ++i)
    for (index j = 1; j <= m; ++j) {
      if (band && !(*band)(i - 1, j - 1)) continue;
      T const a = R[static_cast<std::size_t>((i - 1) * s + (j - 1))];
      T const b = R[static_cast<std::size_t>((i - 1) * s + j)];
      T const c = R[static_cast<std::size_t>(i * s + (j - 1))];
      T const sm = gamma > T(0) ? softmin3(a, b, c, gamma) : std::min(std::min(a, b), c);
      R[static_cast<std::size_t>(i * s + j)] = distance(cost, x + (i - 1) * d, y + (j - 1) * d, d) + sm;
    }
  return R;
}

/// The benchmark baseline and value oracle: soft-DTW with squared Euclidean cost, one pair, full
/// table, std::exp / std::log per cell.
template <class T>
T soft_dtw_value(T const* x, T const* y, index n, index m, index d, T gamma) {
  T const inf = std::numeric_limits<T>::infinity();
  index const s = m + 1;
  std::vector<T> R(static_cast<std::size_t>((n + 1) * s), inf);
  R[0] = T(0);
  for (index i = 1; i <= n; ++i)
    for (index j = 1; j <= m; ++j) {
      T dist = T(0);
      for (index k = 0; k < d; ++k) {
        T const diff = x[(i - 1) * d + k] - y[(j - 1) * d + k];
        dist += diff * diff;
      }
      R[static_cast<std::size_t>(i * s + j)] =
          dist + softmin3(R[static_cast<std::size_t>((i - 1) * s + (j - 1))],
                          R[static_cast<std::size_t>((i - 1) * s + j)],
                          R[static_cast<std::size_t>(i * s + (j - 1))], gamma);
    }
  return R[static_cast<std::size_t>(n * s + m)];
}

/// The same with any point cost and an optional band mask.
template <class T>
T soft_dtw_value(T const* x, T const* y, index n, index m, index d, T gamma, point_cost cost,
                 mask const* band = nullptr) {
  auto const R = forward_table(x, y, n, m, d, gamma, cost, band);
  return R[static_cast<std::size_t>(n * (m + 1) + m)];
}

/// Value, E (n * m, optional) and gradients gx (n * d), gy (m * d) (each optional, overwritten),
/// by Cuturi & Blondel's Algorithm 2 on full (n+2) x (m+2) tables:
///   e(i,j) = a e(i+1,j) + b e(i,j+1) + c e(i+1,j+1),  a = exp((r(i+1,j) - r(i,j) - D(i+1,j))/g)
/// with r = -inf on the extra row/column, r(n+1,m+1) = r(n,m), e(n+1,m+1) = 1, D = 0 outside.
/// Cells outside the band (r = +inf) are turned into -inf as successors and get e = 0.
/// Requires gamma > 0 (the hard gradient comes from brute_force).
template <class T>
T soft_dtw_value_and_grad(T const* x, T const* y, index n, index m, index d,
                          std::type_identity_t<T> gamma, std::type_identity_t<T>* gx,
                          std::type_identity_t<T>* gy, std::type_identity_t<T>* E = nullptr, point_cost cost = point_cost::squared_euclidean,
                          mask const* band = nullptr) {
  T const inf = std::numeric_limits<T>::infinity();
  auto const R1 = forward_table(x, y, n, m, d, gamma, cost, band);
  T const value = R1[static_cast<std::size_t>(n * (m + 1) + m)];
  index const s = m + 2;
  auto at = [s](index i, index j) { return static_cast<std::size_t>(i * s + j); };
  std::vector<T> r(static_cast<std::size_t>((n + 2) * s), -inf), D(r.size(), T(0)),
      e(r.size(), T(0));
  for (index i = 1; i <= n; ++i)
    for (index j = 1; j <= m; ++j) {
      T const v = R1[static_cast<std::size_t>(i * (m + 1) + j)];
      r[at(i, j)] = v == inf ? -inf : v;  // never evaluate (+inf) - (+inf)
      D[at(i, j)] = distance(cost, x + (i - 1) * d, y + (j - 1) * d, d);
    }
  r[at(n + 1, m + 1)] = value;
  e[at(n + 1, m + 1)] = T(1);
  auto weight = [&](index i, index j, index i2, index j2) {
    T const succ = r[at(i2, j2)];
    if (succ == -inf) return T(0);
    return std::exp((succ - r[at(i, j)] - D[at(i2, j2)]) / gamma);
  };
  for (index j = m; j >= 1; --j)
    for (index i = n; i >= 1; --i) {
      if (r[at(i, j)] == -inf) continue;  // outside the band / unreachable: e = 0
      T const a = weight(i, j, i + 1, j);
      T const b = weight(i, j, i, j + 1);
      T const c = weight(i, j, i + 1, j + 1);
      e[at(i, j)] = a * e[at(i + 1, j)] + b * e[at(i, j + 1)] + c * e[at(i + 1, j + 1)];
    }
  if (E)
    for (index i = 0; i < n; ++i)
      for (index j = 0; j < m; ++j) E[i * m + j] = e[at(i + 1, j + 1)];
  if (gx) std::fill(gx, gx + n * d, T(0));
  if (gy) std::fill(gy, gy + m * d, T(0));
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < m; ++j) {
      T const eij = e[at(i + 1, j + 1)];
      if (eij == T(0)) continue;
      for (index k = 0; k < d; ++k) {
        T const p = eij * distance_partial(cost, x[i * d + k], y[j * d + k]);
        if (gx) gx[i * d + k] += p;
        if (gy) gy[j * d + k] -= p;
      }
    }
  return value;
}

// --- (c) plain hard DTW --------------------------------------------------------------------

/// DTW: the minimum over paths of the summed point costs (squared Euclidean by default).
template <class T>
T hard_dtw_value(T const* x, T const* y, index n, index m, index d,
                 point_cost cost = point_cost::squared_euclidean, mask const* band = nullptr) {
  T const inf = std::numeric_limits<T>::infinity();
  std::vector<T> prev(static_cast<std::size_t>(m + 1), inf), cur(prev.size(), inf);
  prev[0] = T(0);
  for (index i = 1; i <= n; ++i) {
    cur[0] = inf;
    for (index j = 1; j <= m; ++j) {
      if (band && !(*band)(i - 1, j - 1)) { cur[static_cast<std::size_t>(j)] = inf; continue; }
      T const best = std::min(std::min(prev[static_cast<std::size_t>(j - 1)],
                                       prev[static_cast<std::size_t>(j)]),
                              cur[static_cast<std::size_t>(j - 1)]);
      cur[static_cast<std::size_t>(j)] = distance(cost, x + (i - 1) * d, y + (j - 1) * d, d) + best;
    }
    std::swap(prev, cur);
  }
  return prev[static_cast<std::size_t>(m)];
}

// --- (b) brute force over all alignment paths ------------------------------------------------

using path = std::vector<std::array<index, 2>>;

/// Every monotone path (0,0) -> (n-1,m-1) with steps (1,0), (0,1), (1,1) inside the mask.
inline std::vector<path> all_paths(index n, index m, mask const* band = nullptr) {
  std::vector<path> out;
  path cur;
  auto rec = [&](auto& self, index i, index j) -> void {
    if (band && !(*band)(i, j)) return;
    cur.push_back({i, j});
    if (i == n - 1 && j == m - 1) {
      out.push_back(cur);
    } else {
      if (i + 1 < n) self(self, i + 1, j);
      if (j + 1 < m) self(self, i, j + 1);
      if (i + 1 < n && j + 1 < m) self(self, i + 1, j + 1);
    }
    cur.pop_back();
  };
  rec(rec, 0, 0);
  return out;
}

/// True when p is a monotone alignment path (0,0) -> (n-1,m-1) with unit steps.
inline bool is_alignment_path(path const& p, index n, index m) {
  if (p.empty() || p.front() != std::array<index, 2>{0, 0} ||
      p.back() != std::array<index, 2>{n - 1, m - 1})
    return false;
  for (std::size_t k = 1; k < p.size(); ++k) {
    index const di = p[k][0] - p[k - 1][0], dj = p[k][1] - p[k - 1][1];
    if (di < 0 || dj < 0 || di > 1 || dj > 1 || (di == 0 && dj == 0)) return false;
  }
  return true;
}

template <class T>
T path_cost(path const& p, T const* x, T const* y, index d,
            point_cost cost = point_cost::squared_euclidean) {
  T s = T(0);
  for (auto const& c : p) s += distance(cost, x + c[0] * d, y + c[1] * d, d);
  return s;
}

/// The brute-force answer for one pair: value, E (n * m), gradients, and the path statistics.
template <class T>
struct brute_result {
  T value = T(0);             // soft: -gamma log sum exp(-c / gamma); hard: min c
  T min_cost = T(0);          // min over paths (hard DTW)
  std::size_t paths = 0;      // number of admissible paths
  std::size_t argmin = 0;     // index of the first minimum-cost path
  std::vector<path> all;      // the paths
  std::vector<T> costs;       // their costs
  std::vector<T> E;           // soft: sum_p softmax_p A_p; hard: A of the first optimal path
  std::vector<T> gx, gy;      // sum_ij E_ij d delta(x_i, y_j)
};

/// gamma > 0: soft-DTW by enumeration; gamma == 0: hard DTW (E = indicator of the first
/// optimal path in enumeration order; use data without ties when comparing E or gradients).
template <class T>
brute_result<T> brute_force(T const* x, T const* y, index n, index m, index d, T gamma,
                            point_cost cost = point_cost::squared_euclidean,
                            mask const* band = nullptr) {
  brute_result<T> r;
  r.all = all_paths(n, m, band);
  r.paths = r.all.size();
  r.E.assign(static_cast<std::size_t>(n * m), T(0));
  r.gx.assign(static_cast<std::size_t>(n * d), T(0));
  r.gy.assign(static_cast<std::size_t>(m * d), T(0));
  if (r.all.empty()) {
    r.value = r.min_cost = std::numeric_limits<T>::infinity();
    return r;
  }
  for (auto const& p : r.all) r.costs.push_back(path_cost(p, x, y, d, cost));
  r.argmin = static_cast<std::size_t>(std::min_element(r.costs.begin(), r.costs.end()) -
                                      r.costs.begin());
  r.min_cost = r.costs[r.argmin];
  std::vector<T> w(r.costs.size(), T(0));
  if (gamma > T(0)) {
    T sum = T(0);  // min-shifted: the largest term is exactly 1
    for (std::size_t k = 0; k < w.size(); ++k) {
      w[k] = std::exp(-(r.costs[k] - r.min_cost) / gamma);
      sum += w[k];
    }
    r.value = r.min_cost - gamma * std::log(sum);
    for (auto& v : w) v /= sum;
  } else {
    r.value = r.min_cost;
    w[r.argmin] = T(1);
  }
  for (std::size_t k = 0; k < w.size(); ++k)
    for (auto const& c : r.all[k]) r.E[static_cast<std::size_t>(c[0] * m + c[1])] += w[k];
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < m; ++j) {
      T const eij = r.E[static_cast<std::size_t>(i * m + j)];
      for (index k = 0; k < d; ++k) {
        T const p = eij * distance_partial(cost, x[i * d + k], y[j * d + k]);
        r.gx[static_cast<std::size_t>(i * d + k)] += p;
        r.gy[static_cast<std::size_t>(j * d + k)] -= p;
      }
    }
  return r;
}

// --- path counts -------------------------------------------------------------------------------

/// Delannoy(a, b) = sum_k C(a, k) C(b, k) 2^k = the number of (a+1) x (b+1) alignment paths.
inline std::uint64_t delannoy(std::uint64_t a, std::uint64_t b) {
  std::vector<std::vector<std::uint64_t>> t(a + 1, std::vector<std::uint64_t>(b + 1, 1));
  for (std::uint64_t i = 1; i <= a; ++i)
    for (std::uint64_t j = 1; j <= b; ++j) t[i][j] = t[i - 1][j] + t[i][j - 1] + t[i - 1][j - 1];
  return t[a][b];
}

/// log Delannoy(a, b) from the closed form sum_k C(a,k) C(b,k) 2^k, with lgamma and a
/// max-shifted log-sum-exp (fine for a, b in the thousands).
inline double log_delannoy(std::int64_t a, std::int64_t b) {
  auto lchoose = [](double nn, double k) {
    return std::lgamma(nn + 1) - std::lgamma(k + 1) - std::lgamma(nn - k + 1);
  };
  std::int64_t const kmax = std::min(a, b);
  std::vector<double> terms;
  terms.reserve(static_cast<std::size_t>(kmax + 1));
  double mx = -std::numeric_limits<double>::infinity();
  for (std::int64_t k = 0; k <= kmax; ++k) {
    double const t = lchoose(double(a), double(k)) + lchoose(double(b), double(k)) +
                     double(k) * std::log(2.0);
    terms.push_back(t);
    mx = std::max(mx, t);
  }
  double s = 0;
  for (double t : terms) s += std::exp(t - mx);
  return mx + std::log(s);
}

/// log(number of alignment paths of an n x m grid) by the counting DP in log space.
inline double log_path_count(index n, index m) {
  std::vector<double> prev(static_cast<std::size_t>(m), 0.0), cur(prev.size(), 0.0);
  auto lse3 = [](double a, double b, double c) {
    double const mx = std::max(std::max(a, b), c);
    return mx + std::log(std::exp(a - mx) + std::exp(b - mx) + std::exp(c - mx));
  };
  for (index i = 1; i < n; ++i) {
    cur[0] = 0.0;
    for (index j = 1; j < m; ++j)
      cur[static_cast<std::size_t>(j)] = lse3(prev[static_cast<std::size_t>(j)],
                                              prev[static_cast<std::size_t>(j - 1)],
                                              cur[static_cast<std::size_t>(j - 1)]);
    std::swap(prev, cur);
  }
  return prev[static_cast<std::size_t>(m - 1)];
}

}  // namespace resilin_test::reference
