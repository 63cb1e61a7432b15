// libFuzzer target for the data set readers (UCR 2018 TSV and aeon/sktime .ts). The first byte
// picks the format, the value type and whether to z-normalise; the rest is the file's text. Any
// text must either parse into a data set that keeps its invariants, or be refused with
// resilin::invalid_argument; never crash, read out of bounds or leave a non-finite value. A
// parsed data set written back as .ts (where its labels allow) must read back the same bits.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>

#include <resilin/apps/dataset.hpp>
#include <resilin/apps/ts_file.hpp>

namespace {

[[noreturn]] void fail(char const* what) {
  std::fputs(what, stderr);
  std::fputc('\n', stderr);
  std::abort();
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
void check(resilin::dataset<T> const& ds) {
  ds.validate("fuzz");  // throws invalid_argument: not caught below as a refusal of the text
  for (T const v : ds.values)
    if (!std::isfinite(v)) fail("a parsed value is not finite");
}

template <class T>
void round_trip(resilin::dataset<T> const& ds) {
  std::ostringstream out;
  try {
    resilin::write_ts(out, ds, "fuzz");
  } catch (resilin::invalid_argument const&) {
    return;  // labels that .ts cannot hold (documented)
  }
  std::istringstream in(out.str());
  resilin::dataset<T> const back = resilin::parse_ts<T>(in, "round trip");
  if (back.labels != ds.labels || back.lengths != ds.lengths || back.channels != ds.channels ||
      back.values.size() != ds.values.size())
    fail("write_ts then parse_ts changed the shape or the labels");
  for (std::size_t k = 0; k < ds.values.size(); ++k)
    if (!same_bits(back.values[k], ds.values[k])) fail("write_ts then parse_ts changed a value");
}

template <class T>
void run(bool ts, bool normalise, std::string const& text) {
  resilin::dataset<T> ds;
  try {
    std::istringstream in(text);
    ds = ts ? resilin::parse_ts<T>(in, "fuzz.ts") : resilin::parse_ucr_tsv<T>(in, "fuzz.tsv");
  } catch (resilin::invalid_argument const&) {
    return;  // refused, with a message naming the line
  }
  check(ds);
  if (normalise) {
    resilin::z_normalise(ds);
    check(ds);
  }
  round_trip(ds);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  if (size < 1) return 0;
  std::uint8_t const mode = data[0];
  std::string const text(reinterpret_cast<char const*>(data + 1), size - 1);
  bool const ts = (mode & 1) != 0, normalise = (mode & 4) != 0;
  if (mode & 2) run<float>(ts, normalise, text);
  else run<double>(ts, normalise, text);
  return 0;
}
