// resilin: the command-line tool (DESIGN.md §6). Every error is one line on stderr,
// "resilin: <message>", and a non-zero exit: 2 for command-line usage, 1 for everything else.
#include <cstdio>
#include <exception>
#include <string>
#include <CLI/CLI.hpp>
#include <resilin/version.hpp>
#include "classify_command.hpp"
#include "demo_command.hpp"
#include "distance_command.hpp"
#include "grad_command.hpp"
#include "learn_commands.hpp"
#if __has_include("lct_command.hpp")
#  include "lct_command.hpp"
#  define RESILIN_CLI_HAS_LCT 1
#else
#  define RESILIN_CLI_HAS_LCT 0
#endif

namespace resilin_cli {
/// CLI11 reports an unknown command word as "A subcommand is required"; name it instead, at
/// every level (`resilin bogus`, `resilin lct bogus`).
inline void require_known_subcommand(CLI::App& app, int argc, char** argv) {
  CLI::App* level = &app;
  std::string path;
  for (int i = 1; i < argc && argv[i][0] != '-' && !level->get_subcommands({}).empty(); ++i) {
    std::string const word = argv[i];
    std::string names;
    CLI::App* next = nullptr;
    for (CLI::App* sub : level->get_subcommands({})) {
      if (sub->check_name(word)) next = sub;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (next == nullptr)
      throw CLI::ExtrasError("unknown command '" + path + word + "' (expected one of: " + names + ")",
                             CLI::ExitCodes::ExtrasError);
    path += word + " ";
    level = next;
  }
}
}  // namespace resilin_cli

int main(int argc, char** argv) {
  CLI::App app{"resilin: differentiable elastic alignment of time series (DTW, soft-DTW, MSM,\n"
               "soft-MSM), barycentres, nearest centroid, k-means, and lossless tensor\n"
               "compression (lct). Input: UCR 2018 TSV (label<TAB>v1<TAB>...; ragged lines\n"
               "allowed) or aeon/sktime .ts.",
               "resilin"};
  app.set_version_flag("--version", resilin::version_string);
  app.footer(
      "Examples:\n"
      "  resilin demo --out demo-out\n"
      "  resilin classify --method 1nn --metric dtw --synthetic-cbf\n"
      "  resilin classify --method 1nn --metric dtw --window 0.1 TRAIN.tsv TEST.tsv\n"
      "  resilin classify --method knn --k 5 --metric dtw --window 0.1 TRAIN.tsv TEST.tsv\n"
      "  resilin distance --metric soft-dtw --gamma 0.1 A.tsv [B.tsv]\n"
      "  resilin grad --metric soft-dtw-div A.tsv B.tsv\n"
      "  resilin classify --method centroid --metric soft-msm --gamma 0.1 TRAIN.tsv TEST.tsv\n"
      "  resilin barycenter --metric soft-dtw --svg bary.svg TRAIN.tsv > bary.tsv\n"
      "  resilin kmeans --metric dtw --k 3 TRAIN.tsv\n"
      "Run 'resilin SUBCOMMAND --help' for the options of each.");
  app.require_subcommand(1);
  resilin_cli::add_distance_command(app);
  resilin_cli::add_grad_command(app);
  resilin_cli::add_classify_command(app);
  resilin_cli::add_barycenter_command(app);
  resilin_cli::add_kmeans_command(app);
  resilin_cli::add_demo_command(app);
#if RESILIN_CLI_HAS_LCT
  resilin_cli::add_lct_commands(app);
#endif
  try {
    resilin_cli::require_known_subcommand(app, argc, argv);
    app.parse(argc, argv);  // the chosen subcommand runs inside, from its callback
  } catch (CLI::ParseError const& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::fprintf(stderr, "resilin: %s (see resilin --help)\n", e.what());
    return 2;
  } catch (std::exception const& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "resilin: %s\n", e.what());
    return 1;
  }
  return 0;
}
