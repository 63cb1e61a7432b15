#pragma once
// resilin distance [options] A.tsv [B.tsv]: |A| lines of |B| tab-separated values M(A_i, B_j).
#include <memory>
#include <string>
#include <vector>
#include <CLI/CLI.hpp>
#include <resilin/alignment.hpp>
#include "io.hpp"
#include "metric_ops.hpp"
#include "options.hpp"
#include "progress.hpp"

namespace resilin_cli {

struct pair_files {
  std::string a;
  std::string b;  // empty: B = A
};

template <class T, class Measure>
void run_distance(run_settings const& s, Measure const& m, pair_files const& f) {
  auto const a = load<T>(f.a, s.znorm);
  auto const b = f.b.empty() ? r::dataset<T>{} : load<T>(f.b, s.znorm);
  auto const& bb = f.b.empty() ? a : b;
  check_run(s.measure, a, f.a, bb, f.b.empty() ? f.a : f.b);
  std::vector<T> out(static_cast<std::size_t>(a.size() * bb.size()));
  progress p("distance", "rows", a.size());
  for_row_chunks(a.size(), bb.size(), p, [&](index_t begin, index_t end) {
    pairwise_values(s, m, rows(a.view(), begin, end), bb.view(),
                r::matrix_view<T>{out.data() + begin * bb.size(), end - begin, bb.size()});
  }, pairs_per_call(s));
  table_writer w;
  for (index_t i = 0; i < a.size(); ++i) {
    for (index_t j = 0; j < bb.size(); ++j)
      w.value(out[static_cast<std::size_t>(i * bb.size() + j)], j == 0);
    w.end_line();
  }
  table_writer::finish();
}

inline void add_distance_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "distance", "pairwise distances: |A| lines of |B| tab-separated values (B defaults to A)");
  auto opts = std::make_shared<alignment_options>();
  auto files = std::make_shared<pair_files>();
  add_alignment_options(*cmd, *opts, true);
  cmd->add_option("A", files->a, "UCR TSV file (label<TAB>v1<TAB>...)")->required();
  cmd->add_option("B", files->b, "UCR TSV file (default: A)");
  cmd->callback([opts, files] {
    run_settings const s = resolve(*opts);
    visit(s, [&]<class T>(T, auto const& m) { run_distance<T>(s, m, *files); });
  });
}

}  // namespace resilin_cli
