#pragma once
// Exact nearest neighbours: for each query, the reference series at the smallest M(query, ref)
// (first index on ties), the same answer and the same bits as the argmin of pairwise(); or the
// k nearest, in ascending order of (M, index).
//
// For measures with a lower bound (hard DTW, lower_bound.hpp) each query ranks the references
// by LB_Keogh and computes M in that order until the next bound exceeds the k-th best value
// found: the pruned pairs could not have been nearer. The queries advance together, so that the pairs
// of a round fill lock-step groups (pair.hpp computes a lone pair several times slower). Other
// measures compute every pair. Deterministic: the neighbours and their bits do not depend on the
// threads; how many pairs are computed does (each round is filled to a lock-step group per thread).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <span>
#include <vector>
#include <resilin/alignment.hpp>
#include <resilin/backend/host/batch.hpp>
#include <resilin/backend/host/lockstep.hpp>
#include <resilin/search/lower_bound.hpp>

namespace resilin {

/// The nearest reference of one query: its index in the references and M(query, reference).
template <class T>
struct neighbor {
  index_t index = -1;
  T distance = std::numeric_limits<T>::infinity();
};

/// What a search computed: pairs = |queries| x |references|, computed = the pairs whose M was
/// evaluated (the others were pruned by the lower bound).
struct search_stats {
  index_t pairs = 0;
  index_t computed = 0;
};

namespace search_detail {

/// Whether (v, i) is nearer than (best, bi): smaller, or as small with a smaller index; an
/// empty slot (bi < 0) is farther than any reference, and NaN farther than any number.
template <class T>
bool nearer(T v, index_t i, T best, index_t bi) noexcept {
  if (bi < 0) return i >= 0;
  if (i < 0) return false;
  if (std::isnan(v) || std::isnan(best)) return !std::isnan(v) || (std::isnan(best) && i < bi);
  return v < best || (v == best && i < bi);
}

/// The order of nearer() on neighbours: a strict weak ordering (the heap's).
struct nearer_first {
  template <class T>
  bool operator()(neighbor<T> const& a, neighbor<T> const& b) const noexcept {
    return nearer(a.distance, a.index, b.distance, b.index);
  }
};

/// The k nearest found so far of one query, as a heap of k slots (empty slots: index -1) whose
/// first entry is the farthest of them, the k-th nearest: an offer costs O(log k) (keeping the
/// list sorted cost O(k) per offer, O(|references| k) per query: 4.7 s at k = 20000).
template <class T>
neighbor<T> const& kth_nearest(neighbor<T> const* heap) noexcept { return heap[0]; }

/// Offers reference i at value v to the k nearest found so far (a heap, kth_nearest).
template <class T>
void offer(neighbor<T>* heap, index_t k, index_t i, T v) noexcept {
  if (!nearer(v, i, heap[0].distance, heap[0].index)) return;
  std::pop_heap(heap, heap + k, nearer_first{});
  heap[k - 1] = {i, v};
  std::push_heap(heap, heap + k, nearer_first{});
}

/// The heap of offer() in ascending order of (distance, index).
template <class T>
void sort_nearest(neighbor<T>* heap, index_t k) noexcept {
  std::sort_heap(heap, heap + k, nearer_first{});
}

/// The k nearest of one row of values (row[b]: reference b's) into list[0..k), ascending by
/// (value, index).
template <class T>
void k_smallest(T const* row, index_t count, index_t k, neighbor<T>* list) noexcept {
  std::fill(list, list + k, neighbor<T>{});  // k empty slots: a heap
  for (index_t b = 0; b < count; ++b) offer(list, k, b, row[b]);
  sort_nearest(list, k);
}

/// The references of each query in ascending order of their rounding-safe bound.
template <class T>
struct ranked_references {
  std::vector<T> bounds;        // (queries, references)
  std::vector<index_t> order;   // (queries, references): reference indices, by bound
};

/// The envelope of every reference over the rows of a query of `rows` samples (LB_Keogh the
/// other way round), when every query has that length and they fit in `budget` bytes; else none.
template <class T>
std::vector<keogh_envelope<T>> reference_envelopes(band_spec const& band, batch_view<T const> Q,
                                                   batch_view<T const> R, int threads,
                                                   std::size_t budget = std::size_t(1) << 28) {
  std::vector<keogh_envelope<T>> out;
  index_t const rows = Q.batch > 0 ? Q.length(0) : 0;
  for (index_t a = 1; a < Q.batch; ++a)
    if (Q.length(a) != rows) return out;
  if (rows == 0 || double(R.batch) * double(rows * R.channels) * 2 * sizeof(T) > double(budget)) return out;
  out.resize(static_cast<std::size_t>(R.batch));
  parallel_for(R.batch, threads, [&](index_t b, int) {
    auto& env = out[static_cast<std::size_t>(b)];
    env.build(band, R[b], rows);
    env.release_scratch();  // the budget counts the bounds alone
  });
  return out;
}

/// Ranks the references of queries [begin, end) (rows of `out`), one query per task, by
/// LB_Keogh of the query's envelope.
template <class T, class D>
void rank_by_bound(band_spec const& band, batch_view<T const> Q, batch_view<T const> R,
                   index_t begin, index_t end, int threads, ranked_references<T>& out) {
  index_t const count = R.batch;
  out.bounds.resize(static_cast<std::size_t>((end - begin) * count));
  out.order.resize(out.bounds.size());
  std::vector<keogh_envelope<T>> envelopes(static_cast<std::size_t>(resolve_threads(threads, end - begin)));
  parallel_for(end - begin, threads, [&](index_t a, int w) {
    auto& env = envelopes[static_cast<std::size_t>(w)];
    series_view<T const> const q = Q[begin + a];
    T* const bound = out.bounds.data() + a * count;
    index_t* const order = out.order.data() + a * count;
    index_t built_for = -1;  // the reference length env holds q's envelope for
    for (index_t b = 0; b < count; ++b) {
      series_view<T const> const r = R[b];
      if (r.length != built_for) {
        env.build(band, q, r.length);
        built_for = r.length;
      }
      bound[b] = rounding_safe(keogh_bound<D>(env, q, r), q.length, r.length, q.channels);
    }
    std::iota(order, order + count, index_t(0));
    std::stable_sort(order, order + count, [&](index_t x, index_t y) { return bound[x] < bound[y]; });
  });
}

/// Best-first search of queries [begin, end) for their k nearest (out: k per query): in rounds,
/// each query offers its next candidates in bound order (1, 2, 4, ... up to a lock-step group),
/// all queries' candidates are computed in one batch (lock-step groups across queries), and a
/// query stops, once it holds k, at the first candidate whose bound exceeds its k-th value:
/// that candidate and the later ones cannot be nearer, nor tie it. A candidate that passes is then checked against LB_Keogh the other way round (the
/// reference's envelope), where reference envelopes are given (a cascade: the second bound is
/// computed only for the few candidates the first lets through). Which pairs are computed
/// depends on the data and on the threads (a round is filled to G = a lock-step group per
/// thread, so that every thread runs groups); the neighbours found do not.
template <class T, class Cost, class Smooth>
void best_first(measure<Cost, Smooth> const& m, batch_view<T const> Q, batch_view<T const> R,
                index_t begin, index_t end, int threads, ranked_references<T> const& ranked,
                std::vector<keogh_envelope<T>> const& reference_env,
                std::vector<host_detail::workspace<T>>& ws, index_t k, neighbor<T>* out,
                index_t& computed) {
  using D = typename Cost::distance_type;
  index_t const count = R.batch, queries = end - begin;
  std::vector<index_t> next(static_cast<std::size_t>(queries), 0);  // position in the order
  std::vector<std::pair<index_t, index_t>> pairs;                   // (query row, reference)
  std::vector<T> values;
  index_t const widest = host_detail::lockstep_pairs<T>;
  // The next candidate of query a that its bounds let through, as a pair; false when none is left.
  auto take = [&](index_t a) {
    auto& pos = next[static_cast<std::size_t>(a)];
    T const* const bound = ranked.bounds.data() + a * count;
    index_t const* const order = ranked.order.data() + a * count;
    neighbor<T> const& kth = kth_nearest(out + a * k);  // the k-th nearest so far
    for (; pos < count; ++pos) {
      index_t const b = order[pos];
      if (kth.index >= 0 && bound[b] > kth.distance) {
        pos = count;  // pruned: every later bound is at least as large
        return false;
      }
      if (kth.index >= 0 && !reference_env.empty()) {  // the cascade's second bound
        series_view<T const> const q = Q[begin + a], r = R[b];
        T const lb = rounding_safe(keogh_bound<D>(reference_env[static_cast<std::size_t>(b)], r, q),
                                   q.length, r.length, q.channels);
        if (lb > kth.distance) continue;
      }
      pairs.emplace_back(a, b);
      ++pos;
      return true;
    }
    return false;
  };
  auto const G = static_cast<std::size_t>(widest * resolve_threads(threads, count * queries));
  for (index_t offered = 1;; offered = std::min(widest, 2 * offered)) {
    pairs.clear();
    for (index_t a = 0; a < queries; ++a)
      for (index_t c = 0; c < offered; ++c)
        if (!take(a)) break;
    // fill the last lock-step groups, one more candidate per query in turn: a pair outside a
    // group takes the single-pair path, several times slower (and batch_values groups pairs
    // only when there is a group for every thread)
    for (bool more = true; more && pairs.size() % G != 0;) {
      more = false;
      for (index_t a = 0; a < queries && pairs.size() % G != 0; ++a) more = take(a) || more;
    }
    if (pairs.empty()) {
      for (index_t a = 0; a < queries; ++a) sort_nearest(out + a * k, k);
      return;
    }
    values.resize(pairs.size());
    host_detail::batch_values<T>(
        m, static_cast<index_t>(pairs.size()), threads,
        [&](index_t p) {
          auto const [a, b] = pairs[static_cast<std::size_t>(p)];
          return std::pair{Q[begin + a], R[b]};
        },
        [&](index_t p, T v) { values[static_cast<std::size_t>(p)] = v; }, ws);
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      auto const [a, b] = pairs[p];
      offer(out + a * k, k, b, values[p]);
    }
    computed += static_cast<index_t>(pairs.size());
  }
}

}  // namespace search_detail

/// The k nearest references of each query under m: out[a * k + j] is query a's (j + 1)-th
/// nearest, in ascending order of (M(queries[a], references[b]), b), with the same bits as
/// pairwise(). Hard DTW measures prune with LB_Keogh (has_keogh_bound_v); any other measure
/// computes every pair. `stats`, when given, receives the number of pairs evaluated (which varies
/// with the thread count; the result does not). Throws
/// resilin::invalid_argument for the inputs pairwise() refuses, for an empty set of references
/// with queries to answer, and unless k >= 1 and, with queries to answer, k <= |references|.
template <class Cost, class Smooth, batch_like QB, batch_like RB>
  requires std::same_as<value_of<QB>, value_of<RB>>
std::vector<neighbor<value_of<QB>>> k_nearest_neighbors(host_backend exec, measure<Cost, Smooth> const& m,
                                                        QB queries, RB references, index_t k,
                                                        search_stats* stats = nullptr) {
  using T = value_of<QB>;
  detail::check_measure<Cost, Smooth, T>(m);
  auto const Q = detail::as_const(queries);
  auto const R = detail::as_const(references);
  detail::check_batch(Q, "queries");
  detail::check_batch(R, "references");
  detail::require(Q.channels == R.channels, "channel mismatch: the queries have ", Q.channels,
                  ", the references ", R.channels);
  detail::require(R.batch > 0 || Q.batch == 0, "nearest neighbours: no reference series");
  detail::require(k >= 1 && (k <= R.batch || Q.batch == 0), "nearest neighbours: k must be in [1, ",
                  R.batch, "] (the number of references), got ", k);
  std::vector<neighbor<T>> out(static_cast<std::size_t>(Q.batch * k));
  search_stats total{Q.batch * R.batch, 0};
  // blocks of queries: bounded memory for the ranked references and the pairs of a round
  index_t const block = std::max<index_t>(1, (index_t(1) << 20) / std::max<index_t>(1, R.batch));
  if constexpr (has_keogh_bound_v<measure<Cost, Smooth>>) {
    if (!m.divergence) {
      using D = typename Cost::distance_type;
      std::vector<host_detail::workspace<T>> ws(
          static_cast<std::size_t>(resolve_threads(exec.threads, std::max<index_t>(1, Q.batch * R.batch))));
      search_detail::ranked_references<T> ranked;
      auto const reference_env = search_detail::reference_envelopes(m.band, Q, R, exec.threads);
      for (index_t begin = 0; begin < Q.batch; begin += block) {
        index_t const end = std::min(Q.batch, begin + block);
        search_detail::rank_by_bound<T, D>(m.band, Q, R, begin, end, exec.threads, ranked);
        search_detail::best_first(m, Q, R, begin, end, exec.threads, ranked, reference_env, ws, k,
                                  out.data() + begin * k, total.computed);
      }
      if (stats) *stats = total;
      return out;
    }
  }
  // every pair, a block of queries at a time
  std::vector<T> d;
  for (index_t begin = 0; begin < Q.batch; begin += block) {
    index_t const end = std::min(Q.batch, begin + block);
    d.resize(static_cast<std::size_t>((end - begin) * R.batch));
    pairwise(exec, m, Q.subbatch(begin, end - begin), R, matrix_view<T>{d.data(), end - begin, R.batch});
    for (index_t a = begin; a < end; ++a)
      search_detail::k_smallest(d.data() + (a - begin) * R.batch, R.batch, k, out.data() + a * k);
  }
  total.computed = total.pairs;
  if (stats) *stats = total;
  return out;
}

/// out[a] = the reference nearest to query a under m: the smallest M(queries[a], references[b]),
/// the first b on ties, with the same bits as pairwise() (k_nearest_neighbors with k = 1).
template <class Cost, class Smooth, batch_like QB, batch_like RB>
  requires std::same_as<value_of<QB>, value_of<RB>>
std::vector<neighbor<value_of<QB>>> nearest_neighbors(host_backend exec, measure<Cost, Smooth> const& m,
                                                      QB queries, RB references,
                                                      search_stats* stats = nullptr) {
  return k_nearest_neighbors(exec, m, queries, references, 1, stats);
}

}  // namespace resilin
