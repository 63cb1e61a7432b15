#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <support/catch.hpp>
#include <resilin/apps/dataset.hpp>

namespace {
using resilin::index_t;

resilin::dataset<double> parse(std::string const& text, std::string const& name = "mem.tsv") {
  std::istringstream in(text);
  return resilin::parse_ucr_tsv<double>(in, name);
}

// The message of the exception of type E that f throws ("" if it throws none).
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (E const& e) {
    return e.what();
  }
  return "";
}

bool contains(std::string const& s, std::string const& part) {
  return s.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("UCR TSV: ragged lines, exponent form, labels as given", "[apps][dataset]") {
  auto const ds = parse("1\t0.5\t-1.25e+01\t3E-2\n"
                        "-1\t+2\t1e0\n"
                        "\n"
                        "10\t1\t2\t3\t4\t5\r\n");
  REQUIRE(ds.size() == 3);
  CHECK(ds.labels == std::vector<std::string>{"1", "-1", "10"});
  CHECK(ds.lengths == std::vector<index_t>{3, 2, 5});
  CHECK(ds.max_length == 5);
  CHECK(ds.channels == 1);
  REQUIRE(ds.values.size() == 15);
  CHECK(ds.values[0] == 0.5);
  CHECK(ds.values[1] == -12.5);
  CHECK(ds.values[2] == 3e-2);
  CHECK(ds.values[3] == 0.0);  // padding
  CHECK(ds.values[4] == 0.0);
  CHECK(ds.values[5] == 2.0);
  CHECK(ds.values[6] == 1.0);
  CHECK(ds.values[7] == 0.0);
  CHECK(ds.values[14] == 5.0);

  auto const v = ds.view();
  CHECK(v.batch == 3);
  CHECK(v.max_length == 5);
  CHECK(v.length(1) == 2);
  CHECK(v[2](4, 0) == 5.0);
  CHECK(ds.series(0).length == 3);

  auto const f = ds.as<float>();
  CHECK(f.view()[0](1, 0) == -12.5f);
  CHECK(f.lengths == ds.lengths);
  CHECK(f.labels == ds.labels);
}

TEST_CASE("UCR TSV: a UTF-8 byte order mark before the first label is skipped", "[apps][dataset]") {
  // kept, it made the first series a class of its own ("\xEF\xBB\xBF" "1" is not "1")
  auto const ds = parse("\xEF\xBB\xBF" "1\t0.5\t2\n1\t3\t4\n");
  CHECK(ds.labels == std::vector<std::string>{"1", "1"});
  CHECK(ds.values[0] == 0.5);
  // only at the very start: elsewhere it stays part of the label
  CHECK(parse("1\t2\n\xEF\xBB\xBF" "1\t3\n").labels[1] == "\xEF\xBB\xBF" "1");
}

TEST_CASE("UCR TSV: float parsing is the correctly rounded float", "[apps][dataset]") {
  std::istringstream in("1\t0.1\t3.4028235e38\n");
  auto const ds = resilin::parse_ucr_tsv<float>(in, "f.tsv");
  CHECK(ds.values[0] == 0.1f);
  CHECK(ds.values[1] == 3.4028235e38f);
}

TEST_CASE("UCR TSV: blanks around a line, values below the smallest normal number", "[apps][dataset]") {
  // leading spaces and trailing blanks (spaces, tabs, CR) are not part of the data
  auto const ds = parse("  a\t1\t2\t\r\n\t \t\nb\t3 \t4\t \n");
  REQUIRE(ds.size() == 2);
  CHECK(ds.labels == std::vector<std::string>{"a", "b"});
  CHECK(ds.lengths == std::vector<index_t>{2, 2});
  // underflow rounds (to a subnormal or zero, signs kept), as strtod does; it was refused as
  // "out of range" in float
  std::istringstream in("1\t1e-50\t-1e-50\t1e-40\t2\n");
  auto const f = resilin::parse_ucr_tsv<float>(in, "f.tsv");
  CHECK(f.values[0] == 0.0f);
  CHECK(!std::signbit(f.values[0]));
  CHECK(f.values[1] == 0.0f);
  CHECK(std::signbit(f.values[1]));
  CHECK(f.values[2] == static_cast<float>(1e-40));  // a float subnormal
  CHECK(f.values[3] == 2.0f);
  auto const d = parse("1\t1e-320\t1e-400\n");
  CHECK(d.values[0] == 1e-320);
  CHECK(d.values[1] == 0.0);
}

TEST_CASE("UCR TSV: bad content is refused with the line number", "[apps][dataset]") {
  using E = resilin::invalid_argument;
  auto const err = [](std::string const& text) {
    return error_of<E>([&] { parse(text, "x.tsv"); });
  };
  SECTION("not a number") {
    auto const m = err("1\t1\t2\n2\t1\tabc\t3\n");
    CHECK(contains(m, "x.tsv:2:"));
    CHECK(contains(m, "value 2 is not a number: 'abc'"));
  }
  SECTION("trailing garbage in a number") { CHECK(contains(err("1\t1.5x\n"), "x.tsv:1: value 1")); }
  SECTION("NaN") {
    auto const m = err("1\t1\n\n1\t2\tNaN\n");
    CHECK(contains(m, "x.tsv:3:"));
    CHECK(contains(m, "missing"));
  }
  SECTION("nan, lower case") { CHECK(contains(err("1\tnan\n"), "x.tsv:1: value 1 is missing")); }
  SECTION("question mark") { CHECK(contains(err("1\t1\t?\n"), "x.tsv:1: value 2 is missing")); }
  SECTION("empty field") { CHECK(contains(err("1\t1\n2\t1\t\t2\n"), "x.tsv:2: value 2 is empty")); }
  SECTION("infinity") { CHECK(contains(err("1\tinf\n"), "x.tsv:1: value 1 is not finite")); }
  SECTION("out of range") { CHECK(contains(err("1\t1e400\n"), "x.tsv:1: value 1 is out of range")); }
  SECTION("a label without values") { CHECK(contains(err("1\t2\n3\n"), "x.tsv:2: the line has a label ('3') but no values")); }
  SECTION("two signs") {
    CHECK(contains(err("1\t+-1\n"), "x.tsv:1: value 1 is not a number: '+-1'"));
    CHECK(contains(err("1\t++1\n"), "x.tsv:1: value 1 is not a number: '++1'"));
    CHECK(contains(err("1\t2\t+\n"), "x.tsv:1: value 2 is not a number: '+'"));
  }
  SECTION("a leading tab: an empty label") {
    // it was trimmed as a blank, and the first value became the label (one value lost)
    CHECK(contains(err("\t1\t2\t3\n"), "x.tsv:1: the label is empty"));
    CHECK(contains(err("1\t4\n\t1\t2\n"), "x.tsv:2: the label is empty"));
  }
  SECTION("out of range in float") {
    std::istringstream in("1\t1e39\n");
    CHECK(contains(error_of<E>([&] { resilin::parse_ucr_tsv<float>(in, "x.tsv"); }),
                   "x.tsv:1: value 1 is out of range for the value type: '1e39'"));
  }
  SECTION("another format: commas or spaces, no tabs") {
    // the whole line was echoed as a label without values
    auto const m = err("1,0.25,0.5,0.75,1.0,1.25,1.5,1.75,2.0,2.25,2.5,2.75,3.0\n");
    CHECK(contains(m, "x.tsv:1: no tab in '1,0.25,0.5,0.75,1.0,1.25,1.5,1.75,2.0,2....'"));
    CHECK(contains(m, "not commas or spaces"));
    CHECK(contains(err("1 0.5 0.25\n"), "x.tsv:1: no tab in '1 0.5 0.25'"));
  }
  SECTION("lines ending in CR alone") {
    // read as one line: value 1 was '2\r2', with the CR in the message
    CHECK(contains(err("1\t2\r2\t3\r"), "x.tsv:1: a carriage return inside a line"));
  }
  SECTION("empty input") { CHECK(contains(err(""), "x.tsv: no series")); }
  SECTION("blank lines only") { CHECK(contains(err("\n  \n\r\n"), "x.tsv: no series")); }
}

TEST_CASE("UCR TSV files: read, unreadable, directory", "[apps][dataset]") {
  auto const dir = std::filesystem::temp_directory_path() / "resilin_test_dataset";
  std::filesystem::create_directories(dir);
  auto const path = (dir / "small.tsv").string();
  {
    std::ofstream out(path);
    out << "2\t1.0\t2.0\n1\t3.0\n";
  }
  auto const ds = resilin::read_ucr_tsv(path);
  CHECK(ds.size() == 2);
  CHECK(ds.lengths == std::vector<index_t>{2, 1});

  auto const missing = (dir / "does_not_exist.tsv").string();
  auto const m = error_of<resilin::runtime_error>([&] { resilin::read_ucr_tsv(missing); });
  CHECK(contains(m, "cannot open '" + missing + "'"));
  auto const d = error_of<resilin::runtime_error>([&] { resilin::read_ucr_tsv(dir.string()); });
  CHECK(contains(d, "is a directory"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("z-normalisation: per series over its own length; constant series -> zeros",
          "[apps][dataset]") {
  auto ds = parse("1\t1\t2\t3\t4\n2\t5\t5\t5\n3\t-1e3\t1e3\n4\t0.1\t0.1\t0.1\t0.1\n");
  resilin::z_normalise(ds);
  auto const v = ds.view();
  // series 0: mean 2.5, population sd sqrt(1.25)
  double const sd = std::sqrt(1.25);
  CHECK(v[0](0, 0) == Approx(-1.5 / sd));
  CHECK(v[0](3, 0) == Approx(1.5 / sd));
  for (index_t b : {0, 2}) {
    double sum = 0, ss = 0;
    for (index_t i = 0; i < v.length(b); ++i) sum += v[b](i, 0);
    for (index_t i = 0; i < v.length(b); ++i) ss += v[b](i, 0) * v[b](i, 0);
    CHECK(sum == Approx(0).margin(1e-12));
    CHECK(ss / static_cast<double>(v.length(b)) == Approx(1.0));
  }
  for (index_t i = 0; i < 3; ++i) CHECK(v[1](i, 0) == 0.0);  // constant
  // values whose sums of squares overflow: the same z-scores as the values scaled down (they
  // were all zeros)
  auto huge = parse("1\t1e160\t2e160\t3e160\t4e160\n2\t1\t2\t3\t4\n3\t1e308\t-1.5e308\t1e308\n");
  resilin::z_normalise(huge);
  auto const h = huge.view();
  for (index_t i = 0; i < 4; ++i) CHECK(h[0](i, 0) == Approx(h[1](i, 0)).epsilon(1e-14));
  CHECK(h[0](0, 0) == Approx(-1.5 / sd));
  CHECK(h[2](0, 0) == Approx(1 / std::sqrt(2.0)));
  CHECK(h[2](1, 0) == Approx(-std::sqrt(2.0)));
  for (index_t i = 0; i < 4; ++i) CHECK(v[3](i, 0) == 0.0);  // constant, inexact 0.1
  CHECK(v[1](3, 0) == 0.0);                                   // padding untouched
  CHECK(v[2](2, 0) == 0.0);
}

TEST_CASE("z-normalisation: long constant series and tiny magnitudes", "[apps][dataset]") {
  // the running mean's rounding (about n eps |x|) exceeded the constant threshold: 1000 samples
  // of 0.1 became all +1, 10000 all -1
  for (double value : {0.1, 0.3, 1.1, 3.7, 123.456, 1e-3})
    for (index_t n : {1000, 10000}) {
      resilin::dataset<double> ds;
      std::vector<double> const flat(static_cast<std::size_t>(n), value);
      ds.push_back("a", flat);
      resilin::z_normalise(ds);
      auto const v = ds.view();
      for (index_t i = 0; i < n; ++i) REQUIRE(v[0](i, 0) == 0.0);
    }
  // a long series whose mean needs the correction: z-scores with mean 0 and deviation 1 to
  // rounding, the offset 0.1 far above the spread
  {
    resilin::dataset<double> ds;
    std::vector<double> x(5000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.1 + 1e-9 * static_cast<double>(i % 7);
    ds.push_back("a", x);
    resilin::z_normalise(ds);
    double sum = 0, ss = 0;
    for (double z : ds.values) sum += z;
    for (double z : ds.values) ss += z * z;
    CHECK(std::abs(sum) / 5000 < 1e-6);
    CHECK(ss / 5000 == Approx(1).epsilon(1e-6));
  }
  // a series spread over 1000 ulps of its mean: the mean's correction, added to the mean, was
  // rounded away, and the z-scores kept an error of half an ulp of the mean (about 1e-3 here)
  {
    resilin::dataset<double> ds;
    std::vector<double> x(1001);
    double const hi = 0.1 + 1000 * std::numeric_limits<double>::epsilon() * 0.1;
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 2 ? hi : 0.1;
    ds.push_back("a", x);
    resilin::z_normalise(ds);
    // two values, 501 and 500 times: z = -sqrt(500/501) and sqrt(501/500) exactly
    for (std::size_t i = 0; i < x.size(); ++i)
      REQUIRE(ds.values[i] == Approx(i % 2 ? std::sqrt(501.0 / 500.0) : -std::sqrt(500.0 / 501.0)).epsilon(1e-9));
  }
  // squares below 1e-308 underflowed: 1e-200, 2e-200, 3e-200 became zeros, 1e-160 lost digits
  for (double unit : {1e-200, 1e-160, 1e-300, 1.0, 1e300}) {
    resilin::dataset<double> ds;
    std::vector<double> const x{unit, 2 * unit, 3 * unit};
    ds.push_back("a", x);
    resilin::z_normalise(ds);
    CHECK(ds.values[0] == Approx(-std::sqrt(1.5)).epsilon(1e-15));
    CHECK(ds.values[1] == Approx(0).margin(1e-15));
    CHECK(ds.values[2] == Approx(std::sqrt(1.5)).epsilon(1e-15));
  }
}

TEST_CASE("dataset: push_back repads, from_ragged checks its sizes", "[apps][dataset]") {
  resilin::dataset<double> ds;
  std::vector<double> const a{1, 2}, b{3, 4, 5};
  ds.push_back("x", a);
  ds.push_back("y", b);
  CHECK(ds.max_length == 3);
  CHECK(ds.values == std::vector<double>{1, 2, 0, 3, 4, 5});
  CHECK(ds.lengths == std::vector<index_t>{2, 3});

  std::vector<double> const flat{1, 2, 3};
  CHECK_THROWS_AS(resilin::dataset<double>::from_ragged({"a"}, flat, {2}),
                  resilin::invalid_argument);
  CHECK_THROWS_AS(resilin::dataset<double>::from_ragged({"a", "b"}, flat, {3}),
                  resilin::invalid_argument);
  auto const two = resilin::dataset<double>::from_ragged({"a", "b"}, flat, {1, 2});
  CHECK(two.values == std::vector<double>{1, 0, 2, 3});
}

TEST_CASE("dataset: push_back of the dataset's own series duplicates it", "[apps][dataset]") {
  // the span pointed into values, which growing freed before the copy: {1, 2, 3, 4, 5} came
  // back as 1.1e-313 -9.1e-299 3 4 5 (AddressSanitizer: heap-use-after-free)
  resilin::dataset<double> ds;
  std::vector<double> const a{1, 2, 3, 4, 5}, b{6, 7}, c{8, 9, 10, 11, 12, 13};
  ds.push_back("a", a);
  ds.values.shrink_to_fit();  // the next row reallocates
  auto const first = ds.series(0);
  ds.push_back("copy", std::span<double const>(first.data, static_cast<std::size_t>(first.size())));
  CHECK(ds.values == std::vector<double>{1, 2, 3, 4, 5, 1, 2, 3, 4, 5});
  ds.push_back("b", b);
  for (int k = 0; k < 40; ++k) {  // many appends: some reallocate, some do not
    auto const s = ds.series(2);
    ds.push_back("b" + std::to_string(k), std::span<double const>(s.data, static_cast<std::size_t>(s.size())));
  }
  ds.push_back("c", c);  // repads: the series keep their samples
  auto const own = ds.series(0);
  ds.push_back("a2", std::span<double const>(own.data, static_cast<std::size_t>(own.size())));
  REQUIRE(ds.size() == 45);
  ds.validate("ds");
  CHECK(ds.max_length == 6);
  for (index_t s = 0; s < ds.size(); ++s) {
    std::vector<double> const& want = s < 2 || s == 44 ? a : s < 43 ? b : c;
    auto const got = ds.series(s);
    REQUIRE(got.size() == static_cast<index_t>(want.size()));
    for (index_t i = 0; i < got.size(); ++i) CHECK(got(i, 0) == want[static_cast<std::size_t>(i)]);
    for (index_t i = got.size(); i < ds.max_length; ++i) CHECK(ds.values[static_cast<std::size_t>(s * 6 + i)] == 0.0);
  }
}

TEST_CASE("UCR GunPoint reads as 50 x 150 (RESILIN_UCR_DIR)", "[apps][dataset][ucr]") {
  char const* dir = std::getenv("RESILIN_UCR_DIR");
  if (!dir) {
    WARN("RESILIN_UCR_DIR is not set: skipped");
    return;
  }
  auto const ds = resilin::read_ucr_tsv(std::string(dir) + "/GunPoint/GunPoint_TRAIN.tsv");
  CHECK(ds.size() == 50);
  CHECK(ds.max_length == 150);
  for (auto const len : ds.lengths) CHECK(len == 150);
  for (auto const& l : ds.labels) CHECK((l == "1" || l == "2"));
}
