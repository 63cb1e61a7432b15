#pragma once
// The nearest-centroid classifier: one barycentre per class (barycenter() with the measure's
// method), and each test series gets the class of the centroid with the lowest M(x, c)
// (ties: the class seen first in the training set). With the sharp objective
// (barycenter_options::objective) M is the sharp value, for the barycentres and the prediction.
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>
#include <resilin/alignment.hpp>
#include <resilin/apps/dataset.hpp>
#include <resilin/core/error.hpp>
#include <resilin/learn/barycenter.hpp>
#include <resilin/learn/common.hpp>
#include <resilin/learn/options.hpp>

namespace resilin::learn {

template <class T>
struct nearest_centroid_model {
  std::vector<std::string> classes;              // in order of first appearance in training
  std::vector<barycenter_result<T>> centroids;   // (classes)
  /// What the centroids minimise and predict() measures with (the fit's options.objective).
  barycenter_objective objective = barycenter_objective::value;
};

namespace detail {
/// The members of one class as a padded batch that owns its values.
template <class T>
struct owned_batch {
  std::vector<T> values;
  std::vector<index_t> lengths;
  index_t max_length = 0, channels = 1;
  batch_view<T const> view() const noexcept {
    return {values.data(), static_cast<index_t>(lengths.size()), max_length, channels, lengths.data()};
  }
  batch_view<T> view() noexcept {
    return {values.data(), static_cast<index_t>(lengths.size()), max_length, channels, lengths.data()};
  }
};

/// Series `members` of `all`, copied into their own padded batch.
template <class T>
owned_batch<T> gather(batch_view<T const> all, std::span<index_t const> members) {
  owned_batch<T> r;
  r.channels = all.channels;
  for (index_t b : members) r.max_length = std::max(r.max_length, all.length(b));
  auto const row = static_cast<std::size_t>(r.max_length * r.channels);
  r.values.assign(members.size() * row, T(0));
  for (std::size_t s = 0; s < members.size(); ++s) {
    series_view<T const> const x = all[members[s]];
    std::copy(x.data, x.data + x.size(), r.values.begin() + static_cast<std::ptrdiff_t>(s * row));
    r.lengths.push_back(x.length);
  }
  return r;
}

/// Centroids (possibly of different lengths) as one padded batch.
template <class T>
owned_batch<T> stack(std::span<barycenter_result<T> const> centroids) {
  owned_batch<T> r;
  r.channels = centroids.empty() ? 1 : centroids.front().channels;
  for (auto const& c : centroids) r.max_length = std::max(r.max_length, c.length);
  auto const row = static_cast<std::size_t>(r.max_length * r.channels);
  r.values.assign(centroids.size() * row, T(0));
  for (std::size_t s = 0; s < centroids.size(); ++s) {
    std::copy(centroids[s].values.begin(), centroids[s].values.end(),
              r.values.begin() + static_cast<std::ptrdiff_t>(s * row));
    r.lengths.push_back(centroids[s].length);
  }
  return r;
}

/// For each row i of the (n, k) matrix d, the column of its lowest value (ties: the first) and
/// that value.
template <class T>
void argmin_rows(std::vector<T> const& d, index_t n, index_t k, std::vector<index_t>& which,
                 std::vector<double>& value) {
  which.assign(static_cast<std::size_t>(n), 0);
  value.assign(static_cast<std::size_t>(n), 0.0);
  for (index_t i = 0; i < n; ++i) {
    T const* row = d.data() + i * k;
    index_t const best = std::min_element(row, row + k) - row;
    which[static_cast<std::size_t>(i)] = best;
    value[static_cast<std::size_t>(i)] = static_cast<double>(row[best]);
  }
}

/// For each series, the index of the centroid with the lowest measure (ties: the first), and
/// that measure.
template <alignment_measure Measure, class T>
void nearest(Measure const& m, barycenter_objective objective, batch_view<T const> series,
             batch_view<T const> centres, int threads, std::vector<index_t>& which,
             std::vector<double>& value) {
  index_t const n = series.batch, k = centres.batch;
  std::vector<T> d(static_cast<std::size_t>(n * k));
  objective_pairwise(objective, threads, m, series, centres, matrix_view<T>{d.data(), n, k});
  argmin_rows(d, n, k, which, value);
}
}  // namespace detail

/// One barycentre per class of `train` (uniform weights within the class) by a caller's
/// method: fit(batch_view<T const> members, barycenter_options const&) -> barycenter_result<T>
/// (e.g. learn/cuda.cuh's lbfgs_barycenter on a GPU), which must minimise the objective of the
/// options it is given: the model records opt.objective, and predict() measures with it.
template <std::floating_point T, class Fit>
nearest_centroid_model<T> fit_nearest_centroid_with(dataset<T> const& train,
                                                    barycenter_options const& opt, Fit&& fit) {
  detail::require(!train.empty(), "fit_nearest_centroid: the training set is empty");
  train.validate("fit_nearest_centroid: the training set");
  detail::check_options(opt);
  detail::require(opt.start.empty(),
                  "fit_nearest_centroid: opt.start must be empty (it starts one barycentre; the "
                  "classes' start from opt.init)");
  nearest_centroid_model<T> model;
  model.objective = opt.objective;
  std::unordered_map<std::string, std::size_t> code;
  std::vector<std::vector<index_t>> members;
  for (index_t b = 0; b < train.size(); ++b) {
    auto const [it, fresh] = code.try_emplace(train.labels[static_cast<std::size_t>(b)], model.classes.size());
    if (fresh) {
      model.classes.push_back(it->first);
      members.emplace_back();
    }
    members[it->second].push_back(b);
  }
  for (auto const& class_members : members) {
    auto const batch = detail::gather(train.view(), std::span<index_t const>(class_members));
    model.centroids.push_back(fit(batch.view(), opt));
  }
  return model;
}

/// One barycentre per class of `train` (uniform weights within the class), by barycenter().
template <alignment_measure Measure, std::floating_point T>
nearest_centroid_model<T> fit_nearest_centroid(Measure const& m, dataset<T> const& train,
                                               barycenter_options const& opt = {}) {
  return fit_nearest_centroid_with(train, opt, [&](batch_view<T const> members,
                                                   barycenter_options const& o) {
    return barycenter(m, members, {}, o);
  });
}

/// The class of the nearest centroid for every series of `test` (its labels are not used).
template <alignment_measure Measure, std::floating_point T>
std::vector<std::string> predict(Measure const& m, nearest_centroid_model<T> const& model,
                                 dataset<T> const& test, int threads = 0) {
  detail::require(!model.centroids.empty() && model.centroids.size() == model.classes.size(),
                  "predict: the model has ", model.centroids.size(), " centroids for ",
                  model.classes.size(), " classes");
  detail::require(!test.empty(), "predict: the test set is empty");
  test.validate("predict: the test set");
  resilin::detail::check_batch(test.view(), "predict: the test set");
  detail::require(threads >= 0, "threads must be >= 0 (0 = all cores), got ", threads);
  detail::check_objective(model.objective);
  for (std::size_t c = 0; c < model.centroids.size(); ++c) {
    auto const& z = model.centroids[c];
    detail::require(z.length >= 1 && z.channels >= 1 &&
                        z.values.size() == static_cast<std::size_t>(z.length * z.channels),
                    "predict: centroid ", c, " holds ", z.values.size(), " values for length ",
                    z.length, " and ", z.channels, " channels");
    detail::require(z.channels == model.centroids.front().channels, "predict: centroid ", c,
                    " has ", z.channels, " channels, centroid 0 has ", model.centroids.front().channels);
  }
  auto const centres = detail::stack(std::span<barycenter_result<T> const>(model.centroids));
  detail::require(centres.channels == test.channels, "predict: the centroids have ",
                  centres.channels, " channels, the test set ", test.channels);
  std::vector<index_t> which;
  std::vector<double> value;
  detail::nearest(m, model.objective, test.view(), centres.view(), threads, which, value);
  std::vector<std::string> r;
  r.reserve(which.size());
  for (index_t c : which) r.push_back(model.classes[static_cast<std::size_t>(c)]);
  return r;
}

}  // namespace resilin::learn
