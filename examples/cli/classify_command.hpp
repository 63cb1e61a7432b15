#pragma once
// resilin classify --method 1nn|knn|centroid [options] TRAIN TEST (or --synthetic-cbf):
// nearest-neighbour or nearest-centroid classification. stdout: a header and a summary row,
// then "error_rate<TAB>x" and "accuracy<TAB>x" as the last two lines. 1nn: ties go to the
// first training series. knn (--k K): the most frequent label among the K nearest (ties of
// distance to the first training series), a tie of votes to the label of the nearest among
// the tied. centroid: one barycentre per class (learn/barycenter.hpp), ties go to the class
// seen first in TRAIN; --svg draws each class with its barycentre.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <system_error>
#include <vector>
#include <CLI/CLI.hpp>
#include <resilin/alignment.hpp>
#include <resilin/apps/synthetic.hpp>
#include <resilin/search/nearest.hpp>
#include "io.hpp"
#include "learn_options.hpp"
#include "metric_ops.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "svg_plot.hpp"

namespace resilin_cli {

struct classify_inputs {
  std::string method = "1nn";
  index_t k = 1;  // neighbours that vote (knn)
  std::string train;
  std::string test;
  bool synthetic_cbf = false;
  std::uint64_t seed = r::cbf_options{}.seed;
};

/// The built-in split, shaped like the UCR CBF: 30 train (10 per class), 900 test.
template <class T>
void synthetic_cbf_split(std::uint64_t seed, r::dataset<T>& train, r::dataset<T>& test) {
  train = r::make_cbf<T>({.per_class = 10, .length = 128, .seed = seed});
  test = r::make_cbf<T>({.per_class = 300, .length = 128, .seed = seed + 1});
}

/// The k nearest training series of each test row, nearest first (k per row; ties of
/// distance: the first training series).
template <class T, class Measure>
std::vector<index_t> nearest(run_settings const& s, Measure const& m, r::dataset<T> const& train,
                             r::dataset<T> const& test, index_t k) {
  std::vector<index_t> found(static_cast<std::size_t>(test.size() * k));
  progress p("classify", "test series", test.size());
  auto const keep = [&](index_t i, r::neighbor<T> const* list) {
    for (index_t j = 0; j < k; ++j) found[static_cast<std::size_t>(i * k + j)] = list[j].index;
  };
  if constexpr (r::has_keogh_bound_v<Measure>) {
    if (!s.cuda) {  // hard DTW on the host: pruned by LB_Keogh, the same neighbours
      // queries advance together: many per call fill the lock-step groups
      for_row_chunks(test.size(), 1, p, [&](index_t begin, index_t end) {
        auto const rows_found = r::k_nearest_neighbors(s.exec, m, rows(test.view(), begin, end), train.view(), k);
        for (index_t i = begin; i < end; ++i) keep(i, rows_found.data() + (i - begin) * k);
      }, 256);
      return found;
    }
  }
  std::vector<T> d;  // one chunk's rows of values
  std::vector<r::neighbor<T>> list(static_cast<std::size_t>(k));
  for_row_chunks(test.size(), train.size(), p, [&](index_t begin, index_t end) {
    d.resize(static_cast<std::size_t>((end - begin) * train.size()));
    r::matrix_view<T> const out{d.data(), end - begin, train.size()};
    pairwise_values(s, m, rows(test.view(), begin, end), train.view(), out);
    for (index_t i = begin; i < end; ++i) {
      r::search_detail::k_smallest(&out(i - begin, 0), train.size(), k, list.data());
      keep(i, list.data());
    }
  }, pairs_per_call(s));
  return found;
}

/// The label most frequent among a test series' neighbours (nearest first); a tie of votes goes
/// to the label of the nearest neighbour among the tied labels.
inline std::string vote(std::vector<std::string> const& labels, index_t const* neighbours, index_t k) {
  std::vector<std::pair<std::string const*, index_t>> counts;  // in order of first appearance
  for (index_t j = 0; j < k; ++j) {
    std::string const& l = labels[static_cast<std::size_t>(neighbours[j])];
    auto it = std::find_if(counts.begin(), counts.end(), [&](auto const& c) { return *c.first == l; });
    if (it == counts.end()) counts.emplace_back(&l, 1);
    else ++it->second;
  }
  auto best = counts.begin();  // the first of the largest counts: its nearest is the nearest
  for (auto it = counts.begin(); it != counts.end(); ++it)
    if (it->second > best->second) best = it;
  return *best->first;
}

/// Nearest-centroid labels of `test`: one barycentre per class of `train`.
template <class T, class Measure>
std::vector<std::string> centroid_labels(run_settings const& s, Measure const& m,
                                         learn_options const& lo, r::dataset<T> const& train,
                                         r::dataset<T> const& test, std::string const& title) {
  fit_progress fp("classify");
  auto const model = fit_centroids(s, m, train, barycenter_settings(lo, s, &fp));
  fp.finish();
  if (!lo.svg.empty()) {
    std::vector<r::series_view<T const>> centres;
    for (auto const& c : model.centroids) centres.push_back(c.view());
    write_svg<T>(lo.svg, title, class_panels(train, model.classes, centres));
  }
  return predict_centroids(s, m, model, test);
}

template <class T, class Measure>
void run_classify(run_settings const& s, Measure const& m, classify_inputs const& in,
                  learn_options const& lo) {
  require_svg_apart(lo.svg, {in.train, in.test});
  r::dataset<T> train, test;
  if (in.synthetic_cbf) {
    synthetic_cbf_split<T>(in.seed, train, test);
    if (s.znorm) {
      r::z_normalise(train);
      r::z_normalise(test);
    }
  } else {
    train = load<T>(in.train, s.znorm);
    test = load<T>(in.test, s.znorm);
  }
  std::string const train_name = in.synthetic_cbf ? "cbf-train" : in.train;
  std::string const test_name = in.synthetic_cbf ? "cbf-test" : in.test;
  check_run(s.measure, train, train_name, test, test_name);
  // unlabelled cases (.ts files with @classLabel false) have empty labels, which all compare
  // equal: the error rate would be 0 whatever the prediction
  for (auto const* d : {&train, &test})
    for (std::size_t i = 0; i < d->labels.size(); ++i)
      r::detail::require(!d->labels[i].empty(), "classify needs class labels: ",
                         d == &train ? train_name : test_name, " series ", i + 1, " has none");

  // labels compare as text: a test set labelled "1.0" against a training set labelled "1" had
  // every prediction wrong, silently
  std::set<std::string> const classes(train.labels.begin(), train.labels.end());
  index_t unseen = 0;
  std::string first_unseen;
  for (std::string const& l : test.labels)
    if (!classes.contains(l) && unseen++ == 0) first_unseen = l;
  if (unseen > 0)
    std::fprintf(stderr,
                 "resilin classify: warning: %lld of %lld series of %s have a label that no series "
                 "of %s has (the first: '%s'); labels compare as text ('1' and '1.0' differ)\n",
                 static_cast<long long>(unseen), static_cast<long long>(test.size()), test_name.c_str(),
                 train_name.c_str(), first_unseen.c_str());

  auto const start = std::chrono::steady_clock::now();
  std::vector<std::string> predicted;
  if (in.method == "centroid") {
    predicted = centroid_labels<T>(s, m, lo, train, test,
                                   "nearest centroid, " + s.metric_name + ": " + train_name);
  } else {
    r::detail::require(in.k <= train.size(), "--k ", in.k, " is more than the ", train.size(),
                       " training series of ", train_name);
    std::vector<index_t> const found = nearest<T>(s, m, train, test, in.k);
    for (index_t i = 0; i < test.size(); ++i)
      predicted.push_back(vote(train.labels, found.data() + i * in.k, in.k));
  }
  double const seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  index_t errors = 0;
  for (index_t i = 0; i < test.size(); ++i)
    if (predicted[static_cast<std::size_t>(i)] != test.labels[static_cast<std::size_t>(i)])
      ++errors;
  double const error_rate = static_cast<double>(errors) / static_cast<double>(test.size());

  char row[512];
  std::string const method = in.method == "knn" ? "knn k=" + std::to_string(in.k) : in.method;
  std::snprintf(row, sizeof row, "%s\t%s\t%s\t%s\t%s\t%d\t%lld\t%lld\t%lld\t%.3f",
                method.c_str(), s.metric_name.c_str(), s.band_text.c_str(),
                is_soft(s.measure.metric) ? short_number(s.measure.gamma).c_str() : "-",
                std::is_same_v<T, float> ? "float" : "double",
                r::resolve_threads(s.exec.threads, test.size() * train.size()),
                static_cast<long long>(train.size()), static_cast<long long>(test.size()),
                static_cast<long long>(errors), seconds);
  table_writer w;
  w.line("method\tmetric\tband\tgamma\tprecision\tthreads\tn_train\tn_test\terrors\tseconds");
  w.line(row);
  char tail[96];
  std::snprintf(tail, sizeof tail, "error_rate\t%.6g", error_rate);
  w.line(tail);
  std::snprintf(tail, sizeof tail, "accuracy\t%.6g", 1.0 - error_rate);
  w.line(tail);
  table_writer::finish();
}

inline void add_classify_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "classify",
      "1-NN, k-NN or nearest-centroid classification of TEST by TRAIN (or --synthetic-cbf): "
      "last two stdout lines error_rate, accuracy");
  auto opts = std::make_shared<alignment_options>();
  auto in = std::make_shared<classify_inputs>();
  auto lo = std::make_shared<learn_options>();
  cmd->add_option("--method", in->method,
                  "1nn (nearest training series), knn (vote of the --k nearest) or centroid "
                  "(nearest class barycentre)")
      ->capture_default_str();
  auto* k_opt = cmd->add_option("--k", in->k, "neighbours that vote, for --method knn (ties of "
                                "votes: the label of the nearest among the tied)")
                    ->capture_default_str()
                    ->check(CLI::Validator(
                        [](std::string& text) -> std::string {
                          long long v = 0;
                          auto const [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
                          bool const whole = ec == std::errc{} && end == text.data() + text.size();
                          return whole && v >= 1 ? std::string() : "--k must be a whole number >= 1, got '" + text + "'";
                        },
                        "INT >= 1"));
  add_alignment_options(*cmd, *opts);
  add_learn_options(*cmd, *lo);
  add_svg_option(*cmd, *lo);
  auto* cbf = cmd->add_flag("--synthetic-cbf", in->synthetic_cbf,
                            "classify a built-in synthetic CBF split (30 train, 900 test, "
                            "length 128, Saito's formulas) instead of TRAIN and TEST");
  cmd->add_option("--seed", in->seed, "seed of --synthetic-cbf (test uses seed + 1)")
      ->capture_default_str()
      ->check(non_negative_integer)
      ->needs(cbf);
  auto* train = cmd->add_option("TRAIN", in->train, "UCR TSV training file");
  auto* test = cmd->add_option("TEST", in->test, "UCR TSV test file");
  cmd->callback([opts, in, lo, train, test, k_opt] {
    as_usage([&] {
      r::detail::require(in->method == "1nn" || in->method == "knn" || in->method == "centroid",
                         "--method must be 1nn, knn or centroid, got '", in->method, "'");
      r::detail::require(in->method == "knn" || k_opt->count() == 0, "--k applies to --method knn only");
      bool const learn_opts = lo->max_iter_opt->count() > 0 || lo->init_opt->count() > 0 ||
                              !lo->svg.empty();
      r::detail::require(in->method == "centroid" || !learn_opts,
                         "--max-iter, --init and --svg apply to --method centroid only");
      if (in->synthetic_cbf)
        r::detail::require(train->count() == 0 && test->count() == 0,
                           "--synthetic-cbf takes no TRAIN or TEST file");
      else
        r::detail::require(train->count() > 0 && test->count() > 0,
                           "classify needs TRAIN and TEST files (or --synthetic-cbf)");
    });
    if (in->method == "centroid") require_barycentre_metric(*opts);
    run_settings const s = resolve(*opts);
    visit(s, [&]<class T>(T, auto const& m) { run_classify<T>(s, m, *in, *lo); });
  });
}

}  // namespace resilin_cli
