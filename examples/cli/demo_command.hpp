#pragma once
// resilin demo --out DIR: the main job on built-in data, no files needed.
//   1. Cylinder-Bell-Funnel (Saito's formulas, fixed seed): 30 training series (10 per class),
//      900 test series, length 128, z-normalised like the UCR copy;
//   2. per-class barycentres with soft-DTW and soft-MSM (L-BFGS), nearest-centroid accuracy;
//   3. 1-NN DTW accuracy on the same split;
//   4. a synthetic bf16 weight tensor compressed losslessly with lct, decoded and compared;
// then one results table on stdout (also DIR/results.tsv) and SVG plots of the barycentres
// (DIR/cbf_soft_dtw.svg, DIR/cbf_soft_msm.svg). When the tool was built with CUDA and a GPU is
// present, the barycentres' gradients run on it (the backend column says which).
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>
#include <CLI/CLI.hpp>
#include <resilin/apps/synthetic.hpp>
#include <resilin/core/thread_pool.hpp>
#include <resilin/learn/learn.hpp>
#include <resilin/lct/lct.hpp>
#include "classify_command.hpp"
#include "gpu_support.hpp"
#include "learn_options.hpp"
#include "svg_plot.hpp"

namespace resilin_cli {

struct demo_inputs {
  std::string out;
  std::uint64_t seed = r::cbf_options{}.seed;
  int threads = 0;
  int max_iter = 50;
  double gamma = 1.0;
  double c = 1.0;
  std::uint64_t tensor_elements = 1u << 24;
  static constexpr std::uint64_t max_tensor_elements = std::uint64_t{1} << 30;
};

struct demo_row {
  std::string task, measure, result, loss, backend;
  double seconds = 0;
};

namespace demo_detail {

using clock = std::chrono::steady_clock;
inline double since(clock::time_point t) {
  return std::chrono::duration<double>(clock::now() - t).count();
}

inline std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

template <class T>
double accuracy_of(std::vector<std::string> const& predicted, r::dataset<T> const& test) {
  return r::learn::accuracy(std::span<std::string const>(test.labels),
                            std::span<std::string const>(predicted));
}

/// Nearest centroid with measure m (the metric `choice`): fits (the gradients on the GPU when
/// `gpu` names one), plots into svg_path, scores on test.
template <class T, class Measure>
demo_row centroid_row(Measure const& m, measure_choice const& choice, std::string const& name,
                      demo_inputs const& in, r::dataset<T> const& train, r::dataset<T> const& test,
                      std::string const& svg_path, std::string const& gpu,
                      std::string const& host_backend) {
  auto const start = clock::now();
  fit_progress fp("demo");
  r::learn::barycenter_options opt;
  opt.max_iter = in.max_iter;
  opt.threads = in.threads;
  opt.progress = [&fp, &name](std::string_view stage, int it, double loss) {
    fp(name + " " + std::string(stage), it, loss);
  };
  auto const model = r::learn::fit_nearest_centroid_with(
      train, opt, [&](r::batch_view<T const> members, r::learn::barycenter_options const& o) {
        if (!gpu.empty()) return gpu::barycenter(choice, members, o);
        return r::learn::barycenter(m, members, {}, o);
      });
  auto const predicted = r::learn::predict(m, model, test, in.threads);
  fp.finish();
  double const seconds = since(start);
  double loss = 0;
  for (auto const& c : model.centroids) loss += c.loss;
  loss /= static_cast<double>(model.centroids.size());
  std::vector<r::series_view<T const>> centres;
  for (auto const& c : model.centroids) centres.push_back(c.view());
  write_svg<T>(svg_path, name + " barycentres of synthetic Cylinder-Bell-Funnel (faint: training series)",
               class_panels(train, model.classes, centres));
  return {"nearest centroid", name, "accuracy " + fixed(accuracy_of(predicted, test), 4),
          short_number(loss),
          gpu.empty() ? host_backend : "cuda (" + gpu + "), prediction " + host_backend, seconds};
}

inline std::uint16_t to_bf16(float f) {  // round to nearest even
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/// Compresses N(0, 0.02) bf16 weights (a typical initialisation), decodes and compares.
inline demo_row lct_row(demo_inputs const& in) {
  namespace lct = r::lct;
  std::mt19937_64 rng(in.seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<std::uint16_t> weights(in.tensor_elements);
  for (auto& w : weights) w = to_bf16(normal(rng));
  auto const start = clock::now();
  lct::compressed_tensor t(lct::dtype::bf16);
  t.encode(std::span<std::uint16_t const>(weights));
  std::vector<std::uint16_t> back(weights.size());
  t.decode_into(std::span<std::uint16_t>(back));
  double const seconds = since(start);
  bool const exact = back == weights;
  r::detail::require(exact, "lct round trip was not bit-exact (please report this)");
  double const mb = 2.0 * static_cast<double>(weights.size()) / 1e6;
  return {"lct encode+decode",
          "bf16 N(0,0.02), " + std::to_string(weights.size()) + " values (" + fixed(mb, 1) + " MB)",
          "ratio " + fixed(t.ratio(), 4) + ", bit-exact", "-", "host", seconds};
}

}  // namespace demo_detail

inline void run_demo(demo_inputs const& in) {
  using namespace demo_detail;
  using r::detail::require;
  namespace fs = std::filesystem;
  as_usage([&] {
    require(!in.out.empty(), "--out DIR is required");
    require(in.threads >= 0, "--threads must be >= 0 (0 = all cores), got ", in.threads);
    require(in.max_iter >= 1, "--max-iter must be >= 1, got ", in.max_iter);
    require_gamma(in.gamma);
    require(in.c >= 0 && std::isfinite(in.c), "--c must be >= 0 and finite, got ", in.c);
    // the tensor, its decoded copy and its encoding take about 6 bytes per element
    require(in.tensor_elements >= 1 && in.tensor_elements <= demo_inputs::max_tensor_elements,
            "--tensor-elements must be in [1, 2^30], got ", in.tensor_elements);
  });
  std::error_code ec;
  fs::create_directories(in.out, ec);
  require(fs::is_directory(in.out), "--out: cannot create directory '", in.out, "'",
          ec ? " (" + ec.message() + ")" : std::string());
  // the three files it writes at the end, probed before the work (a results.tsv that is a
  // directory failed after the whole run)
  for (char const* name : {"results.tsv", "cbf_soft_dtw.svg", "cbf_soft_msm.svg"}) {
    std::string path = (fs::path(in.out) / name).string();
    std::string const why = writable_file(path);
    if (!why.empty()) RESILIN_THROW(r::runtime_error(r::detail::message("--out: ", why)));
  }

  r::dataset<double> train = r::make_cbf<double>({.per_class = 10, .length = 128, .seed = in.seed});
  r::dataset<double> test =
      r::make_cbf<double>({.per_class = 300, .length = 128, .seed = in.seed + 1});
  r::z_normalise(train);
  r::z_normalise(test);
  int const threads = r::resolve_threads(in.threads, 1 << 20);
  std::string const backend = "host, " + std::to_string(threads) + " thread" + (threads > 1 ? "s" : "");
  std::string const g = short_number(in.gamma);

  std::string const gpu = gpu::device_name();
  measure_choice const soft_dtw{metric_kind::soft_dtw, in.gamma, in.c, {}};
  measure_choice const soft_msm{metric_kind::soft_msm, in.gamma, in.c, {}};
  for (auto const* choice : {&soft_dtw, &soft_msm})  // a gamma whose soft values overflow, say
    check_run(*choice, train, "the CBF training set", test, "the CBF test set");
  std::vector<demo_row> rows;
  rows.push_back(centroid_row<double>(r::measures::soft_dtw<double>(in.gamma), soft_dtw,
                                      "soft-dtw gamma=" + g, in, train, test,
                                      (fs::path(in.out) / "cbf_soft_dtw.svg").string(), gpu,
                                      backend));
  rows.push_back(centroid_row<double>(r::measures::soft_msm<double>(in.gamma, in.c), soft_msm,
                                      "soft-msm gamma=" + g + " c=" + short_number(in.c), in,
                                      train, test, (fs::path(in.out) / "cbf_soft_msm.svg").string(),
                                      gpu, backend));
  {
    auto const start = clock::now();
    run_settings s;
    s.exec = r::host.with_threads(in.threads);
    std::vector<std::string> predicted;
    for (r::index_t b : nearest<double>(s, r::measures::dtw(), train, test, 1))
      predicted.push_back(train.labels[static_cast<std::size_t>(b)]);
    rows.push_back({"1-NN", "dtw (full)", "accuracy " + fixed(accuracy_of(predicted, test), 4),
                    "-", backend, since(start)});
  }
  rows.push_back(lct_row(in));

  std::string table = "task\tmeasure\tresult\tbarycentre_loss\tseconds\tbackend\n";
  for (auto const& row : rows)
    table += row.task + "\t" + row.measure + "\t" + row.result + "\t" + row.loss + "\t" +
             fixed(row.seconds, 2) + "\t" + row.backend + "\n";
  // the file first: a stdout that fails (a full disk) must not lose it
  std::string const results = (fs::path(in.out) / "results.tsv").string();
  errno = 0;
  std::ofstream f(results, std::ios::binary);
  f << table;
  f.close();
  if (!f) {
    int const e = errno;
    RESILIN_THROW(r::runtime_error(r::detail::message("cannot write '", results, "'", r::detail::system_reason(e))));
  }
  std::fputs(table.c_str(), stdout);
  table_writer::finish();
  std::fprintf(stderr, "resilin demo: wrote %s, cbf_soft_dtw.svg and cbf_soft_msm.svg in %s\n",
               "results.tsv", in.out.c_str());
}

inline void add_demo_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "demo",
      "the main job on built-in data: CBF barycentres (soft-DTW, soft-MSM), nearest-centroid "
      "and 1-NN DTW accuracy, lct on a bf16 tensor; a results table and SVG plots in --out DIR");
  auto in = std::make_shared<demo_inputs>();
  cmd->add_option("--out,-o", in->out, "directory for results.tsv and the SVG plots")->required();
  cmd->add_option("--seed", in->seed, "seed of the synthetic data (test split: seed + 1)")
      ->capture_default_str()
      ->check(non_negative_integer);
  cmd->add_option("--threads,-j", in->threads, "threads, 0 = all cores")->capture_default_str();
  cmd->add_option("--max-iter", in->max_iter, "L-BFGS iterations per barycentre")
      ->capture_default_str();
  cmd->add_option("--gamma,-g", in->gamma, "soft-min temperature of soft-DTW and soft-MSM")
      ->capture_default_str();
  cmd->add_option("--c", in->c, "soft-MSM split/merge cost")->capture_default_str();
  cmd->add_option("--tensor-elements", in->tensor_elements, "size of the lct test tensor, at most 2^30")
      ->capture_default_str()
      ->check(non_negative_integer);
  cmd->callback([in] { run_demo(*in); });
}

}  // namespace resilin_cli
