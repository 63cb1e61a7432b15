#pragma once
// Options of the commands that fit barycentres (classify --method centroid, barycenter, kmeans,
// demo), and the stderr progress of iterative fits.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>
#include <CLI/CLI.hpp>
#include <resilin/core/error.hpp>
#include <resilin/learn/learn.hpp>
#include "options.hpp"
#include "progress.hpp"

namespace resilin_cli {
namespace r = resilin;

struct learn_options {
  int max_iter = 100;
  std::string init = "mean";
  std::string svg;
  CLI::Option* max_iter_opt = nullptr;
  CLI::Option* init_opt = nullptr;
};

inline void add_learn_options(CLI::App& cmd, learn_options& o) {
  o.max_iter_opt =
      cmd.add_option("--max-iter", o.max_iter,
                     "barycentre iterations (L-BFGS for soft metrics, DBA for dtw, MBA for msm, "
                     "warp/centroid rounds for fast-cdtw)")
          ->capture_default_str();
  o.init_opt = cmd.add_option("--init", o.init,
                              "barycentre start: mean (Euclidean mean, resampled to the mean "
                              "length) or medoid")
                   ->capture_default_str();
}

/// A file the command will write at its end, checked before any work (a file that cannot be
/// created is reported at once, with the system's reason, not after minutes of fitting): the
/// probe opens it for appending and removes it again if it did not exist.
inline CLI::Validator const writable_file(
    [](std::string& path) -> std::string {
      if (path.empty()) return "needs a file name";
      std::error_code ec;
      if (std::filesystem::is_directory(path, ec)) return "'" + path + "' is a directory";
      bool const existed = std::filesystem::exists(path, ec);
      errno = 0;
      if (!std::ofstream(path, std::ios::binary | std::ios::app)) {
        int const e = errno;
        return "cannot write '" + path + "'" + r::detail::system_reason(e);
      }
      if (!existed) std::filesystem::remove(path, ec);
      return {};
    },
    "FILE", "writable_file");

/// Refuses (a usage error) an --svg file that is one of the command's inputs: the plot,
/// written at the end, would replace the data.
inline void require_svg_apart(std::string const& svg, std::initializer_list<std::string_view> inputs) {
  if (svg.empty()) return;
  for (std::string_view const input : inputs) {
    std::error_code ec;
    if (!input.empty() && std::filesystem::equivalent(svg, input, ec))
      throw CLI::ValidationError("--svg", "'" + svg + "' is the input file '" + std::string(input) + "'");
  }
}

inline void add_svg_option(CLI::App& cmd, learn_options& o) {
  cmd.add_option("--svg", o.svg, "write an SVG plot: the members of each group faintly, its "
                                 "barycentre on top")
      ->check(writable_file);
}

/// Metrics with a barycentre (every one but hard grid CDTW), and with --backend cuda the ones
/// that average on the GPU (the soft metrics and fast-cdtw; the Euclidean mean, DBA and MBA are
/// host-only). A usage error otherwise, before anything looks for a device.
inline void require_barycentre_metric(alignment_options const& o) {
  as_usage([&] {
    metric_kind const m = parse_metric(o.metric);
    r::detail::require(m != metric_kind::cdtw,
                       "metric 'cdtw' (hard grid CDTW) has no barycentre method: use soft-cdtw "
                       "or fast-cdtw");
    r::detail::require(o.backend != "cuda" || is_soft(m) || m == metric_kind::fast_cdtw,
                       "--backend cuda: barycentres on the GPU are for the soft metrics (soft-dtw, "
                       "soft-msm, soft-cdtw and their divergences) and fast-cdtw; metric '",
                       o.metric, "' averages on the host (--backend host)");
  });
}

/// Progress of an iterative fit (the library's progress callback): a line per new stage and
/// otherwise as often as status_line allows. `where` is shown before the stage without making
/// it new (k-means names its restart, iteration and cluster there: 16000 restarts as new stages
/// printed 11,329 lines in 3.7 s).
class fit_progress {
 public:
  explicit fit_progress(std::string command) : line_(std::move(command)) {}

  void operator()(std::string_view stage, int iteration, double loss, std::string_view where = {}) {
    // a stage seen for the first time shows at once; stages that alternate (k-means and its
    // barycentres) keep the throttle
    bool const new_stage = std::find(seen_.begin(), seen_.end(), stage) == seen_.end();
    if (new_stage) seen_.emplace_back(stage);
    if (!line_.due(new_stage)) return;
    char buf[64];
    std::snprintf(buf, sizeof buf, ", iteration %d, loss %.6g", iteration, loss);
    line_.show((where.empty() ? std::string() : std::string(where) + ": ") + std::string(stage) + buf);
  }
  void finish() { line_.finish(); }
  double seconds() const { return line_.seconds(); }

 private:
  status_line line_;
  std::vector<std::string> seen_;
};

/// The library's barycentre options from the command line (the objective: the sharp value with
/// --sharp); `progress` must outlive the fit.
inline r::learn::barycenter_options barycenter_settings(learn_options const& o, run_settings const& s,
                                                        fit_progress* progress) {
  as_usage([&] {
    r::detail::require(o.max_iter >= 1, "--max-iter must be >= 1, got ", o.max_iter);
    r::detail::require(o.init == "mean" || o.init == "medoid",
                       "--init must be mean or medoid, got '", o.init, "'");
  });
  r::learn::barycenter_options b;
  b.max_iter = o.max_iter;
  b.init = o.init == "mean" ? r::learn::init_method::euclidean_mean : r::learn::init_method::medoid;
  b.threads = s.exec.threads;
  b.objective = s.sharp ? r::learn::barycenter_objective::sharp : r::learn::barycenter_objective::value;
  if (progress)
    b.progress = [progress](std::string_view stage, int it, double loss) {
      (*progress)(stage, it, loss);
    };
  return b;
}

}  // namespace resilin_cli
