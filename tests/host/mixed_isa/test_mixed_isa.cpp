// Translation units built for different SIMD widths, linked into one program, each compute
// soft-DTW values and gradients of a batch through the same front-end templates (workload.hpp):
// each must give the results of the straightforward loop, whichever definitions the linker
// kept, and the host backend's templates of the two widths must be different entities
// (simd_abi.hpp).
#include <vector>
#include <support/catch.hpp>
#include <support/reference.hpp>
#include "../helpers.hpp"
#include "run.hpp"

namespace {

/// The straightforward full-table loop (support/reference.hpp) for every pair of the workload.
mixed_isa::result oracle() {
  using namespace mixed_isa;
  namespace ref = resilin_test::reference;
  result o;
  auto const xs = series(batch, n, 1), ys = series(batch, m, 2);
  o.dtw_values.resize(batch);
  o.dtw_gx.assign(xs.size(), 0.0);
  o.dtw_gy.assign(ys.size(), 0.0);
  for (resilin::index_t b = 0; b < batch; ++b)
    o.dtw_values[static_cast<std::size_t>(b)] = ref::soft_dtw_value_and_grad(
        xs.data() + b * n, ys.data() + b * m, n, m, 1, 0.5, o.dtw_gx.data() + b * n, o.dtw_gy.data() + b * m);
  return o;
}

void check_against(mixed_isa::result const& got, mixed_isa::result const& want) {
  using resilin_test::max_rel_diff;
  REQUIRE(got.dtw_values.size() == want.dtw_values.size());
  REQUIRE(got.dtw_gx.size() == want.dtw_gx.size());
  REQUIRE(got.dtw_gy.size() == want.dtw_gy.size());
  CHECK(max_rel_diff(got.dtw_values, want.dtw_values) <= 1e-12);
  CHECK(max_rel_diff(got.dtw_gx, want.dtw_gx) <= 1e-10);
  CHECK(max_rel_diff(got.dtw_gy, want.dtw_gy) <= 1e-10);
}

}  // namespace

TEST_CASE("mixed ISAs: translation units with 16- and 32-byte packs in one program", "[host][abi]") {
  auto const want = oracle();
  auto const narrow = mixed_isa::run_narrow();
  CHECK(narrow.vector_bytes == 16);
  check_against(narrow, want);
#if defined(__x86_64__) || defined(__i386__)
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    WARN("no AVX2 and FMA on this CPU: the 32-byte translation unit is not run");
    return;
  }
  auto const wide = mixed_isa::run_wide();
  CHECK(wide.vector_bytes == 32);
  // different entities: one inline function has one address in a program, so equal addresses
  // would mean that both widths share (and the linker merged) one definition
  CHECK(wide.host_value != narrow.host_value);
  check_against(wide, want);
#endif
}
