#pragma once
// The options shared by distance, grad and classify, their validation, and the dispatch
// from (precision, metric) to a typed measure: visit(settings, f) calls f(T{}, measure), the
// measure being a resilin::measure or fast_cdtw_metric (see metric.hpp, metric_ops.hpp).
#include <cmath>
#include <cstdio>
#include <limits>
#include <concepts>
#include <string>
#include <type_traits>
#include <CLI/CLI.hpp>
#include <resilin/backend/host.hpp>
#include <resilin/core/error.hpp>
#include "gpu_support.hpp"
#include "metric.hpp"

namespace resilin_cli {

/// Runs checks of the command line: their refusals (resilin::invalid_argument) become usage
/// errors, which main() reports with exit code 2 and a pointer to --help.
template <class F>
decltype(auto) as_usage(F&& checks) {
  try {
    return checks();
  } catch (r::invalid_argument const& e) {
    throw CLI::ValidationError(e.what());
  }
}

/// check_inputs() (a refusal of the data: exit 1) and check_option_ranges() for these series
/// (a --c or --gamma too large for them: a usage error, exit 2).
template <class T>
void check_run(measure_choice const& c, r::dataset<T> const& a, std::string_view a_name,
               r::dataset<T> const& b, std::string_view b_name) {
  double const largest = largest_magnitude(a, b);
  check_inputs(c, a, a_name, b, b_name, largest);
  as_usage([&] { check_option_ranges(c, a, b, largest); });
}

/// Integer options that must not be negative (CLI11 reads "-5" into an unsigned as 2^64 - 5).
inline CLI::Validator const non_negative_integer(
    [](std::string& text) {
      return text.find('-') == std::string::npos ? std::string()
                                                 : "must be a whole number >= 0, got " + text;
    },
    "UINT", "non_negative_integer");

/// What CLI11 fills in; resolve() turns it into run_settings or throws one clear message.
struct alignment_options {
  std::string metric;
  double gamma = 1.0;
  long long band = 0;
  double window = 0;
  double itakura = 2.0;
  double c = 1.0;
  long long steps = 300;
  double lr = 0.01;
  std::string init = "identity";
  std::string backend = "host";
  std::string precision = "double";
  int threads = 0;
  bool znorm = false;
  bool sharp = false;
  CLI::Option* gamma_opt = nullptr;
  CLI::Option* band_opt = nullptr;
  CLI::Option* window_opt = nullptr;
  CLI::Option* itakura_opt = nullptr;
  CLI::Option* c_opt = nullptr;
  CLI::Option* steps_opt = nullptr;
  CLI::Option* lr_opt = nullptr;
  CLI::Option* init_opt = nullptr;
};

enum class precision_kind { single, double_ };

struct run_settings {
  measure_choice measure;
  precision_kind precision = precision_kind::double_;
  r::host_backend exec = r::host;  // the host's threads (also for what runs there with --backend cuda)
  bool cuda = false;               // --backend cuda: pairwise values, gradients, barycentres
  bool znorm = false;
  bool sharp = false;                // --sharp: the sharp values instead of the values (host)
  std::string metric_name;           // for outputs: the metric, "sharp soft-dtw" with --sharp
  std::string band_text = "full";  // for summaries: full, R=5, w=0.1, itakura=2
};

/// The fewest pairs per pairwise call of a command's row chunks (progress.hpp's for_row_chunks):
/// a GPU call allocates, copies and synchronises, so it takes many; the host needs two per
/// thread (long series make a few pairs a long call, and progress comes between calls).
inline index_t pairs_per_call(run_settings const& s) {
  if (s.cuda) return 16384;
  return 2 * static_cast<index_t>(r::resolve_threads(s.exec.threads, index_t{1} << 30));
}

/// A number for summaries: %g (6 significant digits).
/// The --gamma check of every command: > 0, finite and a normal number (the library refuses a
/// subnormal gamma, which has no finite inverse; here it is a usage error like gamma = 0).
inline void require_gamma(double gamma) {
  r::detail::require(gamma >= std::numeric_limits<double>::min() && std::isfinite(gamma),
                     "--gamma must be > 0, finite and normal (at least ", std::numeric_limits<double>::min(),
                     "), got ", gamma);
}

inline std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// The alignment options of a command. fast-cdtw's warp start is --warp-init; commands without
/// a barycentre (distance, grad: init_alias) also take it as --init, which the commands that
/// average series keep for the barycentre's start (mean | medoid).
inline void add_alignment_options(CLI::App& cmd, alignment_options& o, bool init_alias = false) {
  cmd.add_option("--metric,-m", o.metric,
                 "euclidean | dtw | soft-dtw | soft-dtw-div | msm | soft-msm | soft-msm-div | "
                 "cdtw | soft-cdtw | soft-cdtw-div | fast-cdtw. "
                 "euclidean and dtw sum squared differences (the UCR convention; no square root). "
                 "fast-cdtw fits a warp per pair by Adam (--steps, --lr, --warp-init) and is "
                 "asymmetric: M(A_i, B_j) warps A_i onto B_j's time axis. cdtw has no barycentre "
                 "(barycenter, kmeans and classify --method centroid refuse it)")
      ->required();
  o.gamma_opt = cmd.add_option("--gamma,-g", o.gamma, "soft-min temperature, > 0 (soft metrics)")
                    ->capture_default_str();
  o.band_opt = cmd.add_option("--band", o.band, "Sakoe-Chiba radius R in cells around the diagonal from (0, 0) to (n-1, m-1): |i - j| <= R "
                                            "when n = m, |i (m-1) - j (n-1)| <= R max(n-1, m-1) otherwise (R >= 1 then)");
  o.window_opt = cmd.add_option("--window", o.window,
                                "Sakoe-Chiba window F: R = ceil(F * max(n, m)); 0 = diagonal");
  o.itakura_opt = cmd.add_option("--itakura", o.itakura,
                                 "Itakura parallelogram of slope S >= 1: the cells between the lines of "
                                 "slopes S and 1/S through both corners (tslearn's max_slope; up to six decimals exact)");
  o.band_opt->excludes(o.window_opt)->excludes(o.itakura_opt);
  o.window_opt->excludes(o.band_opt)->excludes(o.itakura_opt);
  o.itakura_opt->excludes(o.band_opt)->excludes(o.window_opt);
  o.c_opt = cmd.add_option("--c", o.c, "MSM split/merge cost, >= 0 (msm metrics)")
                ->capture_default_str();
  o.steps_opt = cmd.add_option("--steps", o.steps, "Adam steps per warp fit, >= 0 (fast-cdtw)")
                    ->capture_default_str();
  o.lr_opt = cmd.add_option("--lr", o.lr, "Adam learning rate of the warp fits, > 0 (fast-cdtw)")
                 ->capture_default_str();
  o.init_opt = cmd.add_option(init_alias ? "--init,--warp-init" : "--warp-init", o.init,
                              "identity | grid: where each warp fit starts, the identity warp or "
                              "the pair's grid CDTW alignment (fast-cdtw; grid: computed on the host)")
                   ->capture_default_str();
  cmd.add_option("--backend", o.backend,
                 "host | cuda (CUDA builds with a GPU: pairwise values and gradients, fast-cdtw's "
                 "warp fits included, the soft metrics' barycentre gradients and fast-cdtw's "
                 "barycentre warp fits, k-means' assignments, on the GPU; refused for the hard "
                 "metrics' averages, which run on the host only)")
      ->capture_default_str();
  cmd.add_option("--precision", o.precision, "double | float")->capture_default_str();
  cmd.add_option("--threads,-j", o.threads, "threads, 0 = all cores")->capture_default_str();
  cmd.add_flag("--znorm", o.znorm, "z-normalise every series after reading");
  cmd.add_flag("--sharp", o.sharp,
               "measure with the sharp value (the expected cost of the soft alignment; the sharp "
               "divergence for a -div metric): distances, gradients, neighbours, and the "
               "barycentres, assignments and losses of the commands that average; soft metrics, "
               "on the host");
}

inline run_settings resolve(alignment_options const& o) {
  return as_usage([&] {
    using r::detail::require;
    run_settings s;
    s.measure.metric = parse_metric(o.metric);
    require(o.c_opt == nullptr || o.c_opt->count() == 0 || is_msm(s.measure.metric),
            "--c applies to the msm metrics only, not to '", o.metric, "'");
    require(o.c >= 0 && std::isfinite(o.c), "--c must be >= 0 and finite, got ", o.c);
    s.measure.c = o.c;
    require(o.gamma_opt == nullptr || o.gamma_opt->count() == 0 || is_soft(s.measure.metric),
            "--gamma applies to the soft metrics only, not to '", o.metric, "'");
    require_gamma(o.gamma);
    s.measure.gamma = o.gamma;
    bool const fast = s.measure.metric == metric_kind::fast_cdtw;
    require(fast || (o.steps_opt->count() == 0 && o.lr_opt->count() == 0 && o.init_opt->count() == 0),
            "--steps, --lr and --warp-init apply to metric fast-cdtw only, not to '", o.metric, "'");
    require(o.init == "identity" || o.init == "grid",
            "--warp-init must be identity or grid, got '", o.init, "'");
    s.measure.grid_init = o.init == "grid";
    require(o.steps >= 0, "--steps must be >= 0, got ", o.steps);
    require(o.lr > 0 && std::isfinite(o.lr), "--lr must be > 0 and finite, got ", o.lr);
    s.measure.steps = static_cast<r::index_t>(o.steps);
    s.measure.lr = o.lr;
    bool const banded = o.band_opt->count() > 0 || o.window_opt->count() > 0 || o.itakura_opt->count() > 0;
    require(!(banded && s.measure.metric == metric_kind::euclidean),
            "--band, --window and --itakura do not apply to metric 'euclidean' (use dtw --band R)");
    require(!(banded && fast),
            "--band, --window and --itakura do not apply to metric 'fast-cdtw' (its warp is unconstrained)");
    if (fast) s.band_text = "-";
    if (o.band_opt->count() > 0) {
      require(o.band >= 0, "--band must be >= 0, got ", o.band);
      s.measure.band = r::band_spec::radius(static_cast<r::index_t>(o.band));
      s.band_text = "R=" + std::to_string(o.band);
    } else if (o.window_opt->count() > 0) {
      require(o.window >= 0 && std::isfinite(o.window),
              "--window must be a finite value >= 0, got ", o.window);
      s.measure.band = r::band_spec::window(o.window);
      s.band_text = "w=" + short_number(o.window);
    } else if (o.itakura_opt->count() > 0) {
      require(o.itakura >= 1 && std::isfinite(o.itakura),
              "--itakura must be a finite slope >= 1, got ", o.itakura);
      s.measure.band = r::band_spec::itakura(o.itakura);
      s.band_text = "itakura=" + short_number(o.itakura);
    } else if (s.measure.metric == metric_kind::euclidean) {
      s.band_text = "diagonal";
    }
    require(o.backend == "host" || o.backend == "cuda", "--backend must be host or cuda, got '",
            o.backend, "'");
    require(!o.sharp || is_soft(s.measure.metric),
            "--sharp is for the soft metrics (soft-dtw, soft-msm, soft-cdtw and their divergences): "
            "metric '", o.metric, "' has no sharp value of its own");
    require(!o.sharp || o.backend != "cuda",
            "--sharp runs on the host (the GPU has no sharp values): use --backend host");
    s.sharp = o.sharp;
    s.metric_name = o.sharp ? "sharp " + o.metric : o.metric;
    if (o.backend == "cuda") {
      // not a usage error: the command line is right, this build or machine has no GPU
      if (std::string const why = gpu::unavailable_reason(); !why.empty())
        RESILIN_THROW(r::runtime_error(r::detail::message("--backend cuda: ", why)));
      s.cuda = true;
    }
    require(o.precision == "double" || o.precision == "float",
            "--precision must be double or float, got '", o.precision, "'");
    s.precision = o.precision == "float" ? precision_kind::single : precision_kind::double_;
    if (s.precision == precision_kind::single) {  // the measure holds them as float
      auto const as_float = [](double v) { return static_cast<float>(v); };
      require(as_float(o.gamma) >= std::numeric_limits<float>::min() && std::isfinite(as_float(o.gamma)),
              "--gamma ", o.gamma, " is not a positive finite float of at least ", std::numeric_limits<float>::min(),
              " (--precision float)");
      require(std::isfinite(as_float(o.c)) && (as_float(o.c) > 0 || o.c == 0), "--c ", o.c,
              " is not a finite float (--precision float)");
    }
    require(o.threads >= 0, "--threads must be >= 0 (0 = all cores), got ", o.threads);
    s.exec = r::host.with_threads(o.threads);
    s.znorm = o.znorm;
    return s;
  });
}

/// Calls f(T{}, measure) with T = float or double and the measure of s.measure (a
/// resilin::measure, or fast_cdtw_metric: commands pass it on through metric_ops.hpp).
template <class F>
void visit(run_settings const& s, F&& f) {
  auto const with = [&]<std::floating_point T>(T tag) {
    visit_metric<T>(s.measure, [&](auto const& m) { f(tag, m); });
  };
  if (s.precision == precision_kind::single) with(0.0f);
  else with(0.0);
}

}  // namespace resilin_cli
