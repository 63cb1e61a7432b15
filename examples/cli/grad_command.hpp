#pragma once
// resilin grad [options] A.tsv B.tsv: |A| lines, line i the gradient of sum_j M(A_i, B_j) with
// respect to A_i (length(A_i) x channels values, tab-separated: the channels of each time step
// in turn).
#include <memory>
#include <string>
#include <vector>
#include <CLI/CLI.hpp>
#include <resilin/alignment.hpp>
#include "distance_command.hpp"
#include "io.hpp"
#include "metric_ops.hpp"
#include "options.hpp"
#include "progress.hpp"

namespace resilin_cli {

template <class T, class Measure>
void run_grad(run_settings const& s, Measure const& m, pair_files const& f) {
  auto const a = load<T>(f.a, s.znorm);
  auto const b = load<T>(f.b, s.znorm);
  check_run(s.measure, a, f.a, b, f.b);
  std::vector<T> grads(a.values.size());
  r::batch_view<T> const g{grads.data(), a.size(), a.max_length, a.channels, a.lengths.data()};
  progress p("grad", "rows", a.size());
  for_row_chunks(a.size(), b.size(), p, [&](index_t begin, index_t end) {
    pairwise_gradients(s, m, rows(a.view(), begin, end), b.view(), rows(g, begin, end));
  }, pairs_per_call(s));
  table_writer w;
  for (index_t i = 0; i < a.size(); ++i) {
    auto const gi = g[i];
    for (index_t k = 0; k < gi.size(); ++k) w.value(gi.data[k], k == 0);
    w.end_line();
  }
  table_writer::finish();
}

inline void add_grad_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "grad", "gradients: line i is d/dA_i of sum_j M(A_i, B_j), length(A_i) x channels values "
              "(the channels of each time step in turn)");
  auto opts = std::make_shared<alignment_options>();
  auto files = std::make_shared<pair_files>();
  add_alignment_options(*cmd, *opts, true);
  cmd->add_option("A", files->a, "UCR TSV file: the series to differentiate")->required();
  cmd->add_option("B", files->b, "UCR TSV file: the series they are compared with")->required();
  cmd->callback([opts, files] {
    run_settings const s = resolve(*opts);
    visit(s, [&]<class T>(T, auto const& m) { run_grad<T>(s, m, *files); });
  });
}

}  // namespace resilin_cli
