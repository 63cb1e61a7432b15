#pragma once
// Options and result types shared by every barycentre method (L-BFGS, DBA, MBA) and by the
// estimators built on them (nearest centroid, k-means).
#include <functional>
#include <string_view>
#include <vector>
#include <resilin/core/config.hpp>
#include <resilin/core/views.hpp>

namespace resilin::learn {

/// Where a barycentre search starts.
enum class init_method {
  euclidean_mean,  // the weighted mean, each series resampled linearly to the barycentre length
  medoid,          // the input minimising the weighted summed measure, resampled likewise
};

/// What a barycentre minimises, and what k-means and nearest centroid measure with.
enum class barycenter_objective {
  value,  // M(z, x): the measure's value (soft-DTW, its divergence, ...)
  sharp,  // the sharp value (resilin/sharp.hpp): the expected cost of the soft alignment, or the
          // sharp divergence for a divergence measure; for a hard measure it is the value
};

/// Called with the stage ("lbfgs", "dba", "mba", "fcdtw", "kmeans"), a count from 1 and the loss:
/// after each sweep of DBA/MBA, each alternation round of fcdtw_barycenter and each k-means
/// round, and for L-BFGS after each evaluation that
/// lowers the loss (line-search trials included, so it may run more often than max_iter).
/// What it throws is passed on to the caller. May be empty.
using progress_callback = std::function<void(std::string_view stage, int iteration, double loss)>;

struct barycenter_options {
  /// The longest barycentre accepted (2^40 samples, beyond any memory): longer ones are refused
  /// with invalid_argument before any buffer is sized.
  static constexpr index_t max_length = index_t{1} << 40;
  index_t length = 0;            // 0: the mean length of the inputs (rounded); <= max_length
  init_method init = init_method::euclidean_mean;
  int max_iter = 100;            // L-BFGS iterations / DBA-MBA sweeps; 0: the initialisation
  double tolerance = 1e-6;       // relative loss decrease that stops DBA/MBA; L-BFGS epsilon
  int threads = 0;               // 0: all cores (host_backend's convention)
  progress_callback progress;    // may be empty
  /// Non-empty: the search starts from these values instead of `init`: the barycentre's
  /// (length, channels) samples, row-major, finite (a warm start; k-means starts each update
  /// from the cluster's current centroid). With length 0 the barycentre takes the start's
  /// length; otherwise the sizes must agree. One barycentre's: fit_nearest_centroid and k-means
  /// refuse it.
  std::vector<double> start{};
  /// sharp: minimise the summed sharp values (host only: second-order passes, several times
  /// slower than the values' gradients).
  barycenter_objective objective = barycenter_objective::value;
};

template <class T>
struct barycenter_result {
  std::vector<T> values;  // (length, channels) row-major
  index_t length = 0, channels = 1;
  double loss = 0;        // sum_k w_k M(z, x_k) at the result (weights normalised to sum 1)
  int iterations = 0;

  series_view<T const> view() const noexcept { return {values.data(), length, channels}; }
};

}  // namespace resilin::learn
