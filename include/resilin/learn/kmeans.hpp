#pragma once
// k-means under an elastic measure: k-means++ seeding, Lloyd iterations whose update step is
// the measure's barycentre (barycenter(): L-BFGS, DBA or MBA; FastCDTW: fcdtw_kmeans in
// learn/fcdtw_kmeans.hpp, through kmeans_with) started from the cluster's centroid or init's
// start, the lower (kmeans_options::warm_start), several restarts keeping the
// lowest inertia sum_i M(x_i, c_{a(i)}). Deterministic: one std::mt19937_64 seeded with
// opt.seed drives every restart in turn, and every parallel step is reduced in a fixed order.
//
// The "gap" g(x, c) = M(x, c) - M(x, x)/2 - M(c, c)/2 drives seeding and empty-cluster repair:
// for exact DTW and for divergences it is M itself; for soft measures (whose M(x, x) != 0 in
// general, of either sign: soft-DTW's value is < 0, soft-MSM's sharp value < 0 at large gamma) it
// is the divergence, 0 for equal series (negative
// gaps count as 0).
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>
#include <resilin/alignment.hpp>
#include <resilin/apps/synthetic.hpp>
#include <resilin/core/error.hpp>
#include <resilin/learn/barycenter.hpp>
#include <resilin/learn/common.hpp>
#include <resilin/learn/nearest_centroid.hpp>
#include <resilin/learn/options.hpp>

namespace resilin::learn {

/// Where a k-means run stands as one centroid's update begins (kmeans_options::on_update): for
/// progress reports, whose barycentre lines (progress_callback) carry no cluster of their own.
struct kmeans_update {
  int restart = 1;         // 1-based, of `restarts` (1 with initial_centres)
  int restarts = 1;
  int iteration = 1;       // the Lloyd iteration, 1-based, counted per restart
  index_t cluster = 0;     // 0-based, of `clusters` (k); empty clusters are not updated
  index_t clusters = 1;
  index_t members = 0;     // the series averaged
};

struct kmeans_options {
  int k = 2;
  int restarts = 3;              // k-means++ seedings tried; the lowest inertia wins
  int max_iter = 20;             // Lloyd iterations per restart
  /// Also stop when an iteration changes the inertia by at most tol * |inertia|: with soft
  /// measures the barycentres are approximate, so the assignments of a few borderline series
  /// may keep flipping at no gain. Relative, unlike the `tol` of tslearn's and aeon's k-means
  /// (|change| < tol, absolute): their tol t is this one's t / |inertia|. 0: stop only when no
  /// assignment changes.
  double tol = 0;
  std::uint64_t seed = 0;
  /// Each update starts from its cluster's current centroid (the seed series in the first
  /// iteration, as tslearn's and aeon's k-means start theirs), or from barycenter.init's start
  /// where that has the lower loss on the members. Weighing the two costs two more loss
  /// evaluations (L-BFGS: with the gradient; init = medoid: the members' n^2 dissimilarities)
  /// wherever the members differ from those of the centroid's last update. DBA, MBA and L-BFGS
  /// never return a centroid worse than their start, so for measures whose value does not
  /// depend on the order of its arguments (every built-in one but FastCDTW) the inertia does
  /// not rise from iteration to iteration, up to rounding, where no empty cluster is repaired.
  /// false: every update starts afresh from barycenter.init (the behaviour before 2026-12-07).
  bool warm_start = true;
  /// length 0: the mean length of all series, for every centroid; start must be empty (warm_start
  /// sets each update's)
  barycenter_options barycenter{};
  progress_callback progress;    // ("kmeans", iteration, inertia) after each Lloyd iteration
  /// Optional: called before each centroid's barycentre update, whose progress
  /// (barycenter.progress) follows; what it throws reaches the caller as it is.
  std::function<void(kmeans_update const&)> on_update;
  /// Optional: start from these k series (indices) instead of k-means++ (one run, no restarts).
  std::vector<index_t> initial_centres{};
};

template <class T>
struct kmeans_result {
  std::vector<index_t> assignments;            // (n): cluster of each series, in [0, k)
  std::vector<barycenter_result<T>> centroids;  // (k)
  double inertia = 0;                          // sum_i M(x_i, centroid of its cluster)
  int iterations = 0;                          // Lloyd iterations of the winning restart
  /// Whether the winning restart settled within max_iter: its last iteration changed no
  /// assignment, or changed the inertia by at most tol * |inertia|; false: max_iter ran out
  /// first (or is 0), the clustering may improve with more iterations.
  bool converged = false;
};

/// What k-means asks of a measure, for kmeans_with(): M(x, x) of each series, the matrix
/// out(i, j) = M(series_i, centres_j), and a barycentre of some series. measure_ops adapts an
/// alignment measure; fcdtw_kmeans (learn/fcdtw_barycenter.hpp) adapts FastCDTW.
template <alignment_measure Measure>
struct measure_ops {
  Measure m;
  /// The sharp value of m in place of its value everywhere (barycenter_objective): assignments,
  /// inertia and barycentres (whose options' objective is set to it).
  barycenter_objective objective = barycenter_objective::value;
  /// The measure's checks, with those of its parameters once cast to T where T is given.
  template <class T = void>
  void validate() const { m.template validate<T>(); }
  template <class T>
  std::vector<double> self(batch_view<T const> b, int threads) const {
    std::vector<T> out(static_cast<std::size_t>(b.batch));
    detail::objective_values(objective, threads, m, b, b, std::span<T>(out));
    return std::vector<double>(out.begin(), out.end());
  }
  template <class T>
  void pairwise(batch_view<T const> series, batch_view<T const> centres, matrix_view<T> out,
                int threads) const {
    detail::objective_pairwise(objective, threads, m, series, centres, out);
  }
  template <class T>
  barycenter_result<T> barycenter(batch_view<T const> members, barycenter_options const& o) const {
    barycenter_options with = o;
    with.objective = objective;
    return learn::barycenter(m, members, {}, with);
  }
};

namespace detail {
/// For each series, the index of the nearest centre (ties: the first) and that measure.
template <class Ops, class T>
void nearest_of(Ops const& ops, batch_view<T const> series, batch_view<T const> centres,
                int threads, std::vector<index_t>& which, std::vector<double>& value) {
  index_t const n = series.batch, k = centres.batch;
  std::vector<T> d(static_cast<std::size_t>(n * k));
  ops.pairwise(series, centres, matrix_view<T>{d.data(), n, k}, threads);
  argmin_rows(d, n, k, which, value);
}

/// A seed series as a centroid of `length` samples (resampled linearly: the series itself when
/// it has that length), so that every centroid has the target length even where no
/// barycentre replaces it (max_iter = 0, a cluster that stays empty).
template <class T>
barycenter_result<T> as_centroid(series_view<T const> x, index_t length) {
  std::vector<double> acc(static_cast<std::size_t>(length * x.channels), 0.0);
  add_resampled(x, length, 1.0, std::span<double>(acc));
  barycenter_result<T> c;
  c.values.assign(acc.begin(), acc.end());
  c.length = length;
  c.channels = x.channels;
  return c;
}

/// k-means++: the first centre uniformly, each next one with probability proportional to its
/// gap to the nearest chosen centre (uniformly among the unchosen when every gap is 0).
template <class Ops, class T>
std::vector<index_t> kmeans_plus_plus(Ops const& ops, batch_view<T const> series,
                                      std::span<double const> self, index_t k, int threads,
                                      portable_random& rng) {
  index_t const n = series.batch;
  std::vector<index_t> chosen{rng.uniform_int(0, n - 1)};
  std::vector<bool> taken(static_cast<std::size_t>(n), false);
  taken[static_cast<std::size_t>(chosen[0])] = true;
  std::vector<double> gap(static_cast<std::size_t>(n), math::infinity<double>());
  std::vector<T> d(static_cast<std::size_t>(n));
  while (static_cast<index_t>(chosen.size()) < k) {
    index_t const c = chosen.back();
    batch_view<T const> const centre{series[c].data, 1, series.max_length, series.channels,
                                     series.lengths ? series.lengths + c : nullptr};
    ops.pairwise(series, centre, matrix_view<T>{d.data(), n, 1}, threads);
    double total = 0;
    for (index_t i = 0; i < n; ++i) {
      auto const s = static_cast<std::size_t>(i);
      double const g = divergence_of(static_cast<double>(d[s]), self[s], self[static_cast<std::size_t>(c)]);
      gap[s] = std::min(gap[s], std::max(0.0, g));
      if (!taken[s]) total += gap[s];
    }
    index_t pick = -1;
    if (total > 0) {
      double const u = rng.uniform() * total;
      double cumulative = 0;
      for (index_t i = 0; i < n && pick < 0; ++i) {
        auto const s = static_cast<std::size_t>(i);
        if (taken[s] || gap[s] <= 0) continue;
        cumulative += gap[s];
        if (u < cumulative) pick = i;
      }
      if (pick < 0)  // u rounded onto the total: the last candidate
        for (index_t i = n - 1; i >= 0 && pick < 0; --i)
          if (!taken[static_cast<std::size_t>(i)] && gap[static_cast<std::size_t>(i)] > 0) pick = i;
    } else {
      index_t const free = n - static_cast<index_t>(chosen.size());
      index_t r = rng.uniform_int(0, free - 1);
      for (index_t i = 0; i < n && pick < 0; ++i)
        if (!taken[static_cast<std::size_t>(i)] && r-- == 0) pick = i;
    }
    chosen.push_back(pick);
    taken[static_cast<std::size_t>(pick)] = true;
  }
  return chosen;
}

/// Lloyd's iterations from the given seed series.
template <class Ops, class T>
kmeans_result<T> lloyd(Ops const& ops, batch_view<T const> series, std::span<double const> self,
                       std::span<index_t const> seeds, kmeans_options const& opt,
                       barycenter_options const& bopt, int restart, int restarts) {
  index_t const n = series.batch, k = static_cast<index_t>(seeds.size());
  int const threads = bopt.threads;
  kmeans_result<T> r;
  for (index_t s : seeds) r.centroids.push_back(as_centroid(series[s], bopt.length));
  std::vector<index_t> which, next;
  std::vector<double> value;
  auto const centres = stack(std::span<barycenter_result<T> const>(r.centroids));
  nearest_of(ops, series, centres.view(), threads, which, value);
  auto const total = [](std::vector<double> const& v) {
    double sum = 0;
    for (double e : v) sum += e;
    return sum;
  };
  r.inertia = total(value);
  // the previous iteration's repairs (series, cluster) where its assignment undid them
  std::vector<std::array<index_t, 2>> undone;
  // the members each centroid was last updated with (none yet: a seed)
  std::vector<std::vector<index_t>> updated_with(static_cast<std::size_t>(k));
  for (int it = 1; it <= opt.max_iter; ++it) {
    std::vector<std::vector<index_t>> members(static_cast<std::size_t>(k));
    for (index_t i = 0; i < n; ++i) members[static_cast<std::size_t>(which[static_cast<std::size_t>(i)])].push_back(i);
    // An empty cluster takes the series with the largest gap to its own centroid, from a
    // cluster that keeps at least one member; none with a positive gap: it stays empty.
    std::vector<index_t> const before = which;
    std::vector<std::array<index_t, 2>> repairs;
    for (index_t j = 0; j < k; ++j) {
      if (!members[static_cast<std::size_t>(j)].empty()) continue;
      auto const now = stack(std::span<barycenter_result<T> const>(r.centroids));
      std::vector<double> const self_c = ops.self(now.view(), threads);
      index_t far = -1;
      double far_gap = 0;
      for (index_t i = 0; i < n; ++i) {
        auto const s = static_cast<std::size_t>(i);
        index_t const a = which[s];
        if (members[static_cast<std::size_t>(a)].size() < 2) continue;
        double const g = divergence_of(value[s], self[s], self_c[static_cast<std::size_t>(a)]);
        if (g > far_gap) { far = i; far_gap = g; }
      }
      if (far < 0) continue;
      auto& from = members[static_cast<std::size_t>(which[static_cast<std::size_t>(far)])];
      from.erase(std::find(from.begin(), from.end(), far));
      members[static_cast<std::size_t>(j)].push_back(far);
      which[static_cast<std::size_t>(far)] = j;
      r.centroids[static_cast<std::size_t>(j)] = as_centroid(series[far], bopt.length);
      value[static_cast<std::size_t>(far)] = self[static_cast<std::size_t>(far)];
      repairs.push_back({far, j});
    }
    for (index_t j = 0; j < k; ++j) {
      auto const& mj = members[static_cast<std::size_t>(j)];
      if (mj.empty()) continue;
      if (opt.on_update) opt.on_update({restart, restarts, it, j, k, static_cast<index_t>(mj.size())});
      auto const batch = gather(series, std::span<index_t const>(mj));
      auto& centroid = r.centroids[static_cast<std::size_t>(j)];
      auto& last = updated_with[static_cast<std::size_t>(j)];
      barycenter_options from = bopt;
      if (opt.warm_start) {
        // from the current centroid, or from init's start where that has the lower loss: a stale
        // centroid may hold a local minimum that init avoids (DBA kept a blend of two series for
        // a cluster of two exact duplicates, whose mean is exact). Both losses by the barycentre
        // itself (max_iter 0), on its own scale; not where the members are those of the
        // centroid's own update, which started from the lower of the two already.
        from.start.assign(centroid.values.begin(), centroid.values.end());
        if (mj != last) {
          barycenter_options probe = bopt;
          probe.max_iter = 0;
          probe.progress = nullptr;
          auto const fresh = ops.barycenter(batch.view(), probe);
          probe.start = from.start;
          if (fresh.loss < ops.barycenter(batch.view(), probe).loss)
            from.start.assign(fresh.values.begin(), fresh.values.end());
        }
      }
      centroid = ops.barycenter(batch.view(), from);
      last = mj;
    }
    auto const updated = stack(std::span<barycenter_result<T> const>(r.centroids));
    nearest_of(ops, series, updated.view(), threads, next, value);
    r.iterations = it;
    double const inertia = total(value);
    if (opt.progress) opt.progress("kmeans", it, inertia);
    // The assignment undid the repairs (the moved series' exact duplicate kept its centroid, and
    // the tie sent it back). Undone twice in a row the same way, the iterations repeat exactly
    // (the same assignments, repairs and so centroids): settled, the cluster stays empty. Such
    // data ran to max_iter unconverged.
    bool const undid = !repairs.empty() && next == before;
    bool const cycle = undid && repairs == undone;
    undone = undid ? std::move(repairs) : std::vector<std::array<index_t, 2>>{};
    bool const settled = next == which || cycle ||
                         (opt.tol > 0 && std::abs(inertia - r.inertia) <= opt.tol * std::abs(inertia));
    r.inertia = inertia;
    which = next;
    if (settled) {
      r.converged = true;
      break;
    }
  }
  r.assignments = std::move(which);
  return r;
}
}  // namespace detail

/// k-means of the series under the measure behind ops (measure_ops, or another adapter with the
/// same members). Every centroid has the length opt.barycenter.length (0: the mean length of
/// all series).
template <class Ops, std::floating_point T>
kmeans_result<T> kmeans_with(Ops const& ops, batch_view<T const> series, kmeans_options const& opt) {
  if constexpr (requires { ops.template validate<T>(); }) ops.template validate<T>();  // in T's range
  else ops.validate();
  detail::check_inputs(series, "kmeans");
  detail::check_options(opt.barycenter);
  detail::require(opt.barycenter.start.empty(),
                  "kmeans: barycenter.start must be empty (each update starts from its centroid, or "
                  "from barycenter.init without warm_start)");
  index_t const n = series.batch;
  detail::require(opt.k >= 1, "kmeans: k must be >= 1, got ", opt.k);
  detail::require(opt.k <= n, "kmeans: k must be <= the number of series (", n, "), got ", opt.k);
  detail::require(opt.restarts >= 1, "kmeans: restarts must be >= 1, got ", opt.restarts);
  detail::require(opt.max_iter >= 0, "kmeans: max_iter must be >= 0, got ", opt.max_iter);
  detail::require(opt.tol >= 0 && opt.tol < math::infinity<double>(),
                  "kmeans: tol must be finite and >= 0, got ", opt.tol);
  detail::require(opt.initial_centres.empty() ||
                      static_cast<index_t>(opt.initial_centres.size()) == opt.k,
                  "kmeans: initial_centres has ", opt.initial_centres.size(),
                  " entries, expected k = ", opt.k);
  for (std::size_t c = 0; c < opt.initial_centres.size(); ++c)
    detail::require(opt.initial_centres[c] >= 0 && opt.initial_centres[c] < n,
                    "kmeans: initial_centres[", c, "] must be in [0, ", n, "), got ",
                    opt.initial_centres[c]);
  barycenter_options bopt = opt.barycenter;
  bopt.length = detail::target_length(series, bopt.length);
  std::vector<double> const self = ops.self(series, bopt.threads);

  portable_random rng(opt.seed);
  int const runs = opt.initial_centres.empty() ? opt.restarts : 1;
  kmeans_result<T> best;
  for (int run = 0; run < runs; ++run) {
    std::vector<index_t> const seeds =
        opt.initial_centres.empty()
            ? detail::kmeans_plus_plus(ops, series, std::span<double const>(self), opt.k, bopt.threads, rng)
            : opt.initial_centres;
    auto result = detail::lloyd(ops, series, std::span<double const>(self),
                                std::span<index_t const>(seeds), opt, bopt, run + 1, runs);
    if (run == 0 || result.inertia < best.inertia) best = std::move(result);
  }
  return best;
}

namespace detail {
/// kmeans_with with kmeans()'s errors: an allocation failure of the library's own becomes
/// resilin::runtime_error, and what the progress callbacks throw reaches the caller as it is.
template <class Ops, std::floating_point T>
kmeans_result<T> kmeans_reporting(Ops const& ops, batch_view<T const> series, kmeans_options const& opt) {
  callback_guard guard;
  kmeans_options o = opt;
  o.progress = guard.wrap(opt.progress);
  o.barycenter.progress = guard.wrap(opt.barycenter.progress);
  o.on_update = guard.wrap(opt.on_update);
  return reporting_allocation_failure("kmeans", guard, [&] { return kmeans_with(ops, series, o); });
}
}  // namespace detail

/// k-means of the series under m (see the top of this file). Every centroid has the length
/// opt.barycenter.length (0: the mean length of all series). opt.barycenter.objective = sharp
/// clusters under the sharp value of m (assignments, inertia and barycentres).
template <alignment_measure Measure, std::floating_point T>
kmeans_result<T> kmeans(Measure const& m, batch_view<T const> series, kmeans_options const& opt) {
  return detail::kmeans_reporting(measure_ops<Measure>{m, opt.barycenter.objective}, series, opt);
}

/// The same for a batch of mutable values.
template <alignment_measure Measure, std::floating_point T>
  requires(!std::is_const_v<T>)
kmeans_result<T> kmeans(Measure const& m, batch_view<T> series, kmeans_options const& opt) {
  return kmeans(m, as_const(series), opt);
}

}  // namespace resilin::learn
