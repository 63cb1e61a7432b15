// 1-NN on the UCR archive (issue 2, item 6): hard DTW with the squared point cost through
// r::pairwise reproduces the published error rates of ../shared/ucr/README.md exactly (to the
// 4 decimals published), for the full window and the learned window (band radius
// ceil(w L / 100)); Euclidean 1-NN reproduces the ED column. Ties go to the first training
// series. Chinatown is compared with the raw-file numbers the README gives (full DTW 0.0262,
// ED = learned w = 0: 0.0554). The data folder comes from RESILIN_UCR_DIR; without it the tests
// warn and return (reported as skipped in the log).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>
#include <support/catch.hpp>
#include <resilin/resilin.hpp>
#include "helpers.hpp"

namespace r = resilin;
namespace fs = std::filesystem;

namespace {

struct split {
  std::vector<long> labels;
  std::vector<double> values;  // (count, length), every series of one length
  r::index_t count = 0, length = 0;
};

/// The UCR 2018 TSV: label<TAB>v1<TAB>...<TAB>vL, integer labels, values parsed by strtod.
split read_tsv(fs::path const& file) {
  std::ifstream in(file);
  INFO("reading " << file.string());
  REQUIRE(in.good());
  split s;
  std::string line;
  long line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line == "\r") continue;
    char const* p = line.c_str();
    char* end = nullptr;
    long const label = std::strtol(p, &end, 10);
    if (end == p) FAIL("line " << line_no << ": no integer label");
    p = end;
    std::vector<double> row;
    for (;;) {
      while (*p == '\t' || *p == ' ' || *p == ',') ++p;
      if (*p == '\0' || *p == '\r' || *p == '\n') break;
      double const v = std::strtod(p, &end);
      if (end == p || !std::isfinite(v)) FAIL("line " << line_no << ": bad value '" << p << "'");
      row.push_back(v);
      p = end;
    }
    if (s.count == 0) s.length = static_cast<r::index_t>(row.size());
    if (static_cast<r::index_t>(row.size()) != s.length)
      FAIL("line " << line_no << ": " << row.size() << " values, expected " << s.length);
    s.labels.push_back(label);
    s.values.insert(s.values.end(), row.begin(), row.end());
    ++s.count;
  }
  return s;
}

/// The 1-NN error rate from a (test, train) distance matrix, ties to the first train series.
double one_nn_error(std::vector<double> const& D, split const& test, split const& train) {
  r::index_t wrong = 0;
  for (r::index_t a = 0; a < test.count; ++a) {
    r::index_t best = 0;
    for (r::index_t b = 1; b < train.count; ++b)
      if (D[static_cast<std::size_t>(a * train.count + b)] < D[static_cast<std::size_t>(a * train.count + best)]) best = b;
    wrong += train.labels[static_cast<std::size_t>(best)] != test.labels[static_cast<std::size_t>(a)] ? 1 : 0;
  }
  return double(wrong) / double(test.count);
}

/// Rounded to the 4 decimals of the published table.
long four_decimals(double e) { return std::lround(e * 1e4); }

struct published {
  char const* name;
  r::index_t n_train, n_test, length;
  double ed;
  double learned;
  int w;  // learned window in % of the length
  double full;
};

// ../shared/ucr/README.md (UCR 2018 DataSummary.csv); Chinatown: the raw-file numbers.
published const table[] = {
    {"GunPoint", 50, 150, 150, 0.0867, 0.0867, 0, 0.0933},
    {"ItalyPowerDemand", 67, 1029, 24, 0.0447, 0.0447, 0, 0.0496},
    {"ECG200", 100, 100, 96, 0.1200, 0.1200, 0, 0.2300},
    {"ArrowHead", 36, 175, 251, 0.2000, 0.2000, 0, 0.2971},
    {"Coffee", 28, 28, 286, 0.0000, 0.0000, 0, 0.0000},
    {"Chinatown", 20, 343, 24, 0.0554, 0.0554, 0, 0.0262},
    {"SyntheticControl", 300, 300, 60, 0.1200, 0.0167, 6, 0.0067},
    {"CBF", 30, 900, 128, 0.1478, 0.0044, 11, 0.0033},
};

void check_dataset(published const& p) {
  char const* dir = std::getenv("RESILIN_UCR_DIR");
  if (!dir || !*dir) {
    WARN("RESILIN_UCR_DIR is not set: UCR 1-NN test for " << p.name << " skipped");
    return;
  }
  if (resilin_test::sanitized && p.n_train * p.n_test * p.length * p.length > 150'000'000) {
    WARN("sanitizer build: UCR 1-NN test for " << p.name << " skipped (too slow here; the Release run covers it)");
    return;
  }
  fs::path const base = fs::path(dir) / p.name;
  auto const train = read_tsv(base / (std::string(p.name) + "_TRAIN.tsv"));
  auto const test = read_tsv(base / (std::string(p.name) + "_TEST.tsv"));
  INFO(p.name);
  REQUIRE(train.count == p.n_train);
  REQUIRE(test.count == p.n_test);
  REQUIRE(train.length == p.length);
  REQUIRE(test.length == p.length);
  auto const X = r::make_batch(std::span<double const>(test.values), test.count, test.length);
  auto const Y = r::make_batch(std::span<double const>(train.values), train.count, train.length);
  std::size_t const cells = static_cast<std::size_t>(test.count * train.count);

  // Euclidean 1-NN, computed here directly.
  std::vector<double> ed(cells);
  for (r::index_t a = 0; a < test.count; ++a)
    for (r::index_t b = 0; b < train.count; ++b) {
      double s = 0;
      for (r::index_t t = 0; t < p.length; ++t) {
        double const diff = test.values[static_cast<std::size_t>(a * p.length + t)] -
                            train.values[static_cast<std::size_t>(b * p.length + t)];
        s += diff * diff;
      }
      ed[static_cast<std::size_t>(a * train.count + b)] = s;
    }
  double const e_ed = one_nn_error(ed, test, train);
  CHECK(four_decimals(e_ed) == four_decimals(p.ed));

  // Full-window DTW.
  std::vector<double> D(cells);
  r::pairwise(r::host, r::measures::dtw(), X, Y, r::matrix_view<double>{D.data(), test.count, train.count});
  double const e_full = one_nn_error(D, test, train);
  INFO("full DTW error " << e_full << ", published " << p.full);
  CHECK(four_decimals(e_full) == four_decimals(p.full));
  for (std::size_t k = 0; k < cells; ++k)
    if (!(D[k] <= ed[k] * (1 + 1e-12))) {  // DTW never exceeds the diagonal path
      FAIL_CHECK("DTW > ED at " << k << ": " << D[k] << " > " << ed[k]);
      break;
    }

  // Learned window: radius ceil(w L / 100).
  r::index_t const radius = (p.w * p.length + 99) / 100;
  std::vector<double> Dw(cells);
  r::pairwise(r::host, r::measures::dtw(r::band_spec::radius(radius)), X, Y,
              r::matrix_view<double>{Dw.data(), test.count, train.count});
  double const e_learned = one_nn_error(Dw, test, train);
  INFO("learned window w = " << p.w << " % (radius " << radius << "): error " << e_learned << ", published "
                             << p.learned);
  CHECK(four_decimals(e_learned) == four_decimals(p.learned));
  if (radius == 0)  // the diagonal path alone: the Euclidean distances (up to summation order)
    CHECK(resilin_test::max_rel_diff(Dw, ed) <= 1e-12);
  // The pruned 1-NN search (search/nearest.hpp): the argmin of the matrices above, bit for bit
  // (not under the sanitizers, at -O0, where test_nearest.cpp checks its memory use)
  if (!resilin_test::sanitized) {
    for (auto const& [m, dist] : {std::pair{r::measures::dtw(), &D},
                                  std::pair{r::measures::dtw(r::band_spec::radius(radius)), &Dw}}) {
      r::search_stats st;
      auto const found = r::nearest_neighbors(r::host, m, X, Y, &st);
      r::index_t wrong = 0;
      for (r::index_t a = 0; a < test.count; ++a) {
        auto const row = dist->begin() + a * train.count;
        auto const arg = std::min_element(row, row + train.count) - row;
        auto const& f = found[static_cast<std::size_t>(a)];
        wrong += f.index != arg || !resilin_test::bits_equal(f.distance, row[arg]);
      }
      INFO("band kind " << int(m.band.type()) << ": DTW computed for " << st.computed << " of "
                        << st.pairs << " pairs");
      CHECK(wrong == 0);
    }
  }
  // The same radius through the window convention.
  if (p.w > 0) {
    std::vector<double> Dv(cells);
    r::pairwise(r::host, r::measures::dtw(r::band_spec::window(p.w / 100.0)), X, Y,
                r::matrix_view<double>{Dv.data(), test.count, train.count});
    CHECK(resilin_test::bitwise_equal(Dv, Dw));
  }
}

}  // namespace

TEST_CASE("UCR 1-NN: GunPoint", "[ucr]") { check_dataset(table[0]); }
TEST_CASE("UCR 1-NN: ItalyPowerDemand", "[ucr]") { check_dataset(table[1]); }
TEST_CASE("UCR 1-NN: ECG200", "[ucr]") { check_dataset(table[2]); }
TEST_CASE("UCR 1-NN: ArrowHead", "[ucr]") { check_dataset(table[3]); }
TEST_CASE("UCR 1-NN: Coffee", "[ucr]") { check_dataset(table[4]); }
TEST_CASE("UCR 1-NN: Chinatown (raw files)", "[ucr]") { check_dataset(table[5]); }
TEST_CASE("UCR 1-NN: SyntheticControl", "[ucr]") { check_dataset(table[6]); }
TEST_CASE("UCR 1-NN: CBF", "[ucr]") { check_dataset(table[7]); }
