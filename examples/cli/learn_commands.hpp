#pragma once
// resilin barycenter [options] FILE (or --synthetic-cbf): one barycentre per class.
//   stdout: the barycentres, readable back by every command: UCR TSV (label<TAB>v1<TAB>...)
//   for labelled univariate data, aeon .ts otherwise (several channels, which TSV cannot hold,
//   or no labels, which it cannot omit); stderr: per class the number of series, the loss
//   sum_k w_k M(z, x_k) / sum_k w_k with uniform weights, and the iterations. For fast-cdtw
//   M is taken at the barycentre's own warps, refitted from their previous state every round
//   (so after up to max-iter x steps Adam steps), which lies below what `distance --steps S`
//   measures for the same barycentre with a fresh fit of S steps (Chinatown: 0.0094 against
//   0.047 at 30 steps, 0.0090 at 3000).
// resilin kmeans --k K [options] FILE (or --synthetic-cbf): k-means with k-means++ seeding.
//   stdout: "series<TAB>cluster<TAB>label" per series (1-based series, 0-based cluster), then
//   "inertia<TAB>x", "iterations<TAB>n" and, when the file has more than one label,
//   "ari<TAB>x" (adjusted Rand index against the labels) as the last lines; stderr: a warning
//   when the assignments still changed in the last iteration.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>
#include <CLI/CLI.hpp>
#include <resilin/apps/synthetic.hpp>
#include <resilin/learn/learn.hpp>
#include "io.hpp"
#include "learn_options.hpp"
#include "metric_ops.hpp"
#include "options.hpp"
#include "svg_plot.hpp"

namespace resilin_cli {

/// One data set from FILE or the built-in synthetic CBF (10 series per class, length 128).
struct single_input {
  std::string file;
  bool synthetic_cbf = false;
  std::uint64_t seed = r::cbf_options{}.seed;
  CLI::Option* file_opt = nullptr;

  void add(CLI::App& cmd, char const* what) {
    auto* cbf = cmd.add_flag("--synthetic-cbf", synthetic_cbf,
                             "use a built-in synthetic CBF set (30 series, length 128, Saito's "
                             "formulas) instead of FILE");
    cmd.add_option("--seed", seed, "seed of --synthetic-cbf")
        ->capture_default_str()
        ->check(non_negative_integer)
        ->needs(cbf);
    file_opt = cmd.add_option("FILE", file, what);
  }
  std::string name() const { return synthetic_cbf ? std::string("cbf") : file; }

  template <class T>
  r::dataset<T> load_data(run_settings const& s) const {
    as_usage([&] {
      r::detail::require(synthetic_cbf || file_opt->count() > 0,
                         "a data FILE (or --synthetic-cbf) is needed");
      r::detail::require(!synthetic_cbf || file_opt->count() == 0, "--synthetic-cbf takes no FILE");
    });
    if (synthetic_cbf) {
      auto d = r::make_cbf<T>({.per_class = 10, .length = 128, .seed = seed});
      if (s.znorm) r::z_normalise(d);
      return d;
    }
    return load<T>(file, s.znorm);
  }
};

template <class T, class Measure>
void run_barycenter(run_settings const& s, Measure const& m, single_input const& in,
                    learn_options const& lo) {
  require_svg_apart(lo.svg, {in.file});
  auto const data = in.load_data<T>(s);
  check_run(s.measure, data, in.name(), data, in.name());
  // univariate centres whose labels a UCR line holds are written as TSV, others as .ts, whose
  // labels are checked before the fit rather than after it (a .ts label with a tab made a TSV
  // line that no command reads back)
  auto const empty = [](std::string const& l) { return l.empty(); };
  bool const tsv = data.channels == 1 && std::all_of(data.labels.begin(), data.labels.end(), tsv_writable_label);
  bool const labelled = !std::all_of(data.labels.begin(), data.labels.end(), empty);
  if (!tsv && labelled)
    for (std::string const& l : data.labels)
      r::detail::require(r::ts_writable_label(l), "barycenter: label '", l, "' of ", in.name(),
                         " cannot be written to the .ts output (empty beside others, or with blanks, ':' or ',')");
  fit_progress fp("barycenter");
  auto const model = fit_centroids(s, m, data, barycenter_settings(lo, s, &fp));
  fp.finish();

  if (tsv) {
    table_writer w;
    for (std::size_t k = 0; k < model.classes.size(); ++k) {
      std::fputs(model.classes[k].c_str(), stdout);
      for (T v : model.centroids[k].values) w.value(v, false);
      w.end_line();
    }
  } else {
    r::dataset<T> centres;
    centres.channels = data.channels;
    for (std::size_t k = 0; k < model.classes.size(); ++k)
      centres.push_back(model.classes[k], model.centroids[k].values);
    std::ostringstream ts;
    r::write_ts(ts, centres, "barycentres");
    std::fputs(ts.str().c_str(), stdout);
  }
  table_writer::finish();
  for (std::size_t k = 0; k < model.classes.size(); ++k) {
    index_t members = 0;
    for (auto const& l : data.labels) members += l == model.classes[k];
    std::fprintf(stderr, "resilin barycenter: class %s: %lld series, %s loss %.9g, %d iterations\n",
                 model.classes[k].empty() ? "(no label)" : model.classes[k].c_str(),
                 static_cast<long long>(members), s.metric_name.c_str(), model.centroids[k].loss,
                 model.centroids[k].iterations);
  }
  if (!lo.svg.empty()) {
    std::vector<r::series_view<T const>> centres;
    for (auto const& c : model.centroids) centres.push_back(c.view());
    write_svg<T>(lo.svg, s.metric_name + " barycentres: " + in.name(),
                 class_panels(data, model.classes, centres));
  }
}

inline void add_barycenter_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "barycenter",
      "one barycentre per class of FILE (or --synthetic-cbf): UCR TSV on stdout (.ts for "
      "several channels or unlabelled data), losses on stderr");
  auto opts = std::make_shared<alignment_options>();
  auto lo = std::make_shared<learn_options>();
  auto in = std::make_shared<single_input>();
  add_alignment_options(*cmd, *opts);
  add_learn_options(*cmd, *lo);
  add_svg_option(*cmd, *lo);
  in->add(*cmd, "UCR TSV or .ts file; each label is a class");
  cmd->callback([opts, lo, in] {
    require_barycentre_metric(*opts);
    run_settings const s = resolve(*opts);
    visit(s, [&]<class T>(T, auto const& m) { run_barycenter<T>(s, m, *in, *lo); });
  });
}

struct kmeans_inputs {
  int k = 0;
  int restarts = 3;
  int iterations = 20;
  double tol = 0;
  std::uint64_t seed = 0;
  bool cold_start = false;
};

template <class T, class Measure>
void run_kmeans(run_settings const& s, Measure const& m, single_input const& in,
                kmeans_inputs const& ki, learn_options const& lo) {
  using r::detail::require;
  require_svg_apart(lo.svg, {in.file});
  auto const data = in.load_data<T>(s);
  check_run(s.measure, data, in.name(), data, in.name());
  require(ki.k >= 1 && ki.k <= data.size(), "--k must be between 1 and the number of series (",
          data.size(), "), got ", ki.k);
  for (std::string const& l : data.labels)
    require(l.find_first_of("\t\r\n") == std::string::npos, "kmeans: label '", l, "' of ", in.name(),
            " cannot be written to the table's label column (a tab or a line break)");
  fit_progress fp("kmeans");
  r::learn::kmeans_options ko;
  ko.k = ki.k;
  ko.restarts = ki.restarts;
  ko.max_iter = ki.iterations;
  ko.tol = ki.tol;
  ko.seed = ki.seed;
  ko.warm_start = !ki.cold_start;
  ko.barycenter = barycenter_settings(lo, s, nullptr);
  // each line names where the run is: "restart 2/3, k-means iteration 4, cluster 1/3 (310
  // series): lbfgs, iteration 40, loss ..." for a barycentre, "restart 2/3: kmeans, iteration
  // 4, loss <inertia>" after a k-means iteration (the restart only where there are several)
  std::string restart, update;
  ko.on_update = [&](r::learn::kmeans_update const& u) {
    restart = u.restarts > 1 ? "restart " + std::to_string(u.restart) + "/" + std::to_string(u.restarts) : "";
    update = (restart.empty() ? "" : restart + ", ") + "k-means iteration " + std::to_string(u.iteration) +
             ", cluster " + std::to_string(u.cluster + 1) + "/" + std::to_string(u.clusters) + " (" +
             std::to_string(u.members) + " series)";
  };
  ko.barycenter.progress = [&](std::string_view stage, int it, double loss) { fp(stage, it, loss, update); };
  ko.progress = [&](std::string_view stage, int it, double loss) { fp(stage, it, loss, restart); };
  auto const result = kmeans_of(s, m, data, ko);
  fp.finish();
  if (!result.converged)
    std::fprintf(stderr,
                 "resilin kmeans: not converged: the assignments still changed in iteration %d "
                 "of %d; more --iterations (or a --tol) may settle them\n",
                 result.iterations, ki.iterations);

  table_writer w;
  w.line("series\tcluster\tlabel");
  for (index_t i = 0; i < data.size(); ++i)
    w.line(std::to_string(i + 1) + "\t" +
           std::to_string(result.assignments[static_cast<std::size_t>(i)]) + "\t" +
           data.labels[static_cast<std::size_t>(i)]);
  char tail[96];
  std::snprintf(tail, sizeof tail, "inertia\t%.9g", result.inertia);
  w.line(tail);
  std::snprintf(tail, sizeof tail, "iterations\t%d", result.iterations);
  w.line(tail);
  auto const truth = r::learn::encode_labels(std::span<std::string const>(data.labels));
  bool labelled = false;
  for (index_t t : truth) labelled = labelled || t != truth.front();
  if (labelled) {
    std::snprintf(tail, sizeof tail, "ari\t%.6g",
                  r::learn::adjusted_rand_index(std::span<index_t const>(truth),
                                                std::span<index_t const>(result.assignments)));
    w.line(tail);
  }
  table_writer::finish();

  if (!lo.svg.empty()) {
    std::vector<std::string> names;
    std::vector<r::series_view<T const>> centres;
    r::dataset<T> tagged = data;  // cluster numbers as labels, for the panels
    for (index_t i = 0; i < data.size(); ++i)
      tagged.labels[static_cast<std::size_t>(i)] =
          std::to_string(result.assignments[static_cast<std::size_t>(i)]);
    for (std::size_t c = 0; c < result.centroids.size(); ++c) {
      names.push_back(std::to_string(c));
      centres.push_back(result.centroids[c].view());
    }
    write_svg<T>(lo.svg, s.metric_name + " k-means (k = " + std::to_string(ki.k) + "): " + in.name(),
                 class_panels(tagged, names, centres, "cluster"));
  }
}

inline void add_kmeans_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "kmeans", "k-means of FILE (or --synthetic-cbf): assignments, inertia and, with labels, the "
                "adjusted Rand index");
  auto opts = std::make_shared<alignment_options>();
  auto lo = std::make_shared<learn_options>();
  auto in = std::make_shared<single_input>();
  auto ki = std::make_shared<kmeans_inputs>();
  add_alignment_options(*cmd, *opts);
  cmd->add_option("--k,-k", ki->k, "number of clusters")->required();
  cmd->add_option("--restarts", ki->restarts, "k-means++ restarts; the lowest inertia wins")
      ->capture_default_str();
  cmd->add_option("--iterations", ki->iterations, "assignment/update rounds per restart")
      ->capture_default_str();
  cmd->add_option("--tol", ki->tol,
                  "also stop when a round changes the inertia by at most tol x |inertia| (0: only "
                  "when no assignment changes)")
      ->capture_default_str();
  cmd->add_option("--kmeans-seed", ki->seed, "seed of the k-means++ draws")
      ->capture_default_str()
      ->check(non_negative_integer);
  add_learn_options(*cmd, *lo);
  cmd->add_flag("--cold-start", ki->cold_start,
                "start every centroid update from --init's start (the mean or medoid of its "
                "members); without it an update starts from the cluster's current centroid where "
                "that has the lower loss, which keeps the inertia from rising");
  add_svg_option(*cmd, *lo);
  in->add(*cmd, "UCR TSV or .ts file (labels, if any, only score the clustering)");
  cmd->callback([opts, lo, in, ki] {
    as_usage([&] {
      r::detail::require(ki->k >= 1, "--k must be >= 1, got ", ki->k);
      r::detail::require(ki->restarts >= 1, "--restarts must be >= 1, got ", ki->restarts);
      r::detail::require(ki->iterations >= 1, "--iterations must be >= 1, got ", ki->iterations);
      r::detail::require(ki->tol >= 0 && ki->tol < std::numeric_limits<double>::infinity(),
                         "--tol must be finite and >= 0, got ", ki->tol);
    });
    require_barycentre_metric(*opts);
    run_settings const s = resolve(*opts);
    visit(s, [&]<class T>(T, auto const& m) { run_kmeans<T>(s, m, *in, *ki, *lo); });
  });
}

}  // namespace resilin_cli
