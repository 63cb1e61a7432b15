// Host training memory, measured: this program replaces the global operator new and delete with
// counting ones (its own executable, so no other test sees them) and checks the peak of what a
// call allocates against the README's contract, whichever series is the longer. Not under the
// sanitizers, whose allocators own part of the program's memory (and at -O0 the 10^6-sample
// pairs take minutes).
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <span>
#include <vector>
#include <support/catch.hpp>
#include <resilin/resilin.hpp>
#include <resilin/cost/soft_msm.hpp>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
TEST_CASE("training memory does not depend on which series is the longer", "[memory]") {
  WARN("not measured under the sanitizers");
}
#else
namespace {
std::atomic<std::size_t> live{0}, peak{0};

// a header of max(64, alignment) bytes before each block holds its size
void* counted_new(std::size_t n, std::size_t align) {
  std::size_t const head = align < 64 ? 64 : align;
  std::size_t const total = (n + head + head - 1) / head * head;
  auto* const raw = static_cast<unsigned char*>(std::aligned_alloc(head, total));
  if (!raw) throw std::bad_alloc();
  *reinterpret_cast<std::size_t*>(raw) = n;
  std::size_t const now = live.fetch_add(n) + n;
  std::size_t seen = peak.load();
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
  return raw + head;
}
void counted_delete(void* p, std::size_t align) noexcept {
  if (!p) return;
  std::size_t const head = align < 64 ? 64 : align;
  auto* const raw = static_cast<unsigned char*>(p) - head;
  live.fetch_sub(*reinterpret_cast<std::size_t*>(raw));
  std::free(raw);
}

/// Peak bytes allocated above what was live when f started.
template <class F>
std::size_t peak_of(F&& f) {
  std::size_t const base = live.load();
  peak.store(base);
  f();
  return peak.load() - base;
}

std::vector<double> random_series(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> d(0.0, 1.0);
  std::vector<double> v(n);
  for (auto& s : v) s = d(gen);
  return v;
}

}  // namespace

void* operator new(std::size_t n) { return counted_new(n, alignof(std::max_align_t)); }
void* operator new[](std::size_t n) { return counted_new(n, alignof(std::max_align_t)); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_new(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_new(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { counted_delete(p, alignof(std::max_align_t)); }
void operator delete[](void* p) noexcept { counted_delete(p, alignof(std::max_align_t)); }
void operator delete(void* p, std::size_t) noexcept { counted_delete(p, alignof(std::max_align_t)); }
void operator delete[](void* p, std::size_t) noexcept { counted_delete(p, alignof(std::max_align_t)); }
void operator delete(void* p, std::align_val_t a) noexcept { counted_delete(p, static_cast<std::size_t>(a)); }
void operator delete[](void* p, std::align_val_t a) noexcept { counted_delete(p, static_cast<std::size_t>(a)); }
void operator delete(void* p, std::size_t, std::align_val_t a) noexcept { counted_delete(p, static_cast<std::size_t>(a)); }
void operator delete[](void* p, std::size_t, std::align_val_t a) noexcept { counted_delete(p, static_cast<std::size_t>(a)); }
// the nothrow forms too, so that no block comes from another allocator than the one freeing it
void* operator new(std::size_t n, std::nothrow_t const&) noexcept {
  try { return counted_new(n, alignof(std::max_align_t)); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, std::nothrow_t const&) noexcept {
  try { return counted_new(n, alignof(std::max_align_t)); } catch (...) { return nullptr; }
}
void* operator new(std::size_t n, std::align_val_t a, std::nothrow_t const&) noexcept {
  try { return counted_new(n, static_cast<std::size_t>(a)); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, std::align_val_t a, std::nothrow_t const&) noexcept {
  try { return counted_new(n, static_cast<std::size_t>(a)); } catch (...) { return nullptr; }
}
void operator delete(void* p, std::nothrow_t const&) noexcept { counted_delete(p, alignof(std::max_align_t)); }
void operator delete[](void* p, std::nothrow_t const&) noexcept { counted_delete(p, alignof(std::max_align_t)); }
void operator delete(void* p, std::align_val_t a, std::nothrow_t const&) noexcept {
  counted_delete(p, static_cast<std::size_t>(a));
}
void operator delete[](void* p, std::align_val_t a, std::nothrow_t const&) noexcept {
  counted_delete(p, static_cast<std::size_t>(a));
}

namespace r = resilin;

namespace {
/// The central difference (S(x + h e_i, y) - S(x - h e_i, y)) / 2h of a measure's value in x_i.
template <class M>
double central_difference(M const& m, std::vector<double> const& x, r::series_view<double const> y,
                          std::size_t i, double h) {
  std::vector<double> xp = x, xm = x;
  xp[i] += h;
  xm[i] -= h;
  auto const len = static_cast<r::index_t>(x.size());
  return (r::value(m, r::series_view<double const>{xp.data(), len, 1}, y) -
          r::value(m, r::series_view<double const>{xm.data(), len, 1}, y)) / (2 * h);
}
}  // namespace

TEST_CASE("training memory does not depend on which series is the longer", "[memory]") {
  // x of 4 samples against y of 10^6: one strip spanned all of y, and its checkpointed backward
  // recomputed that strip whole (hundreds of MB where R is 32 MB); y against x kept R or less
  std::size_t const n = 4, m = 1000000;
  auto const x = random_series(n, 1), y = random_series(m, 2);
  std::vector<double> gx(n), gy(m), hx(n), hy(m);
  r::series_view<double const> const xv{x.data(), static_cast<r::index_t>(n), 1};
  r::series_view<double const> const yv{y.data(), static_cast<r::index_t>(m), 1};
  // R itself: n m values
  std::size_t const r_bytes = n * m * sizeof(double);
  auto const check = [&](char const* name, auto const& measure, bool same_bits) {
    INFO(name);
    double a = 0, b = 0;
    std::size_t const short_first = peak_of([&] {
      a = r::value_and_grad(measure, xv, yv, r::series_view<double>{gx.data(), static_cast<r::index_t>(n), 1},
                            r::series_view<double>{gy.data(), static_cast<r::index_t>(m), 1});
    });
    std::size_t const long_first = peak_of([&] {
      b = r::value_and_grad(measure, yv, xv, r::series_view<double>{hy.data(), static_cast<r::index_t>(m), 1},
                            r::series_view<double>{hx.data(), static_cast<r::index_t>(n), 1});
    });
    INFO("peak bytes: x first " << short_first << ", y first " << long_first << ", R " << r_bytes);
    CHECK(short_first <= r_bytes);
    CHECK(long_first <= r_bytes);
    CHECK(a == b);  // R has the same bits in either orientation
    if (same_bits) {  // one traversal for both orders
      CHECK((gx == hx));  // not decomposed: a failure would print 10^6 values
      CHECK((gy == hy));
    } else {  // the transposed cost adds each cell's partials in another order (gx: sums of
              // 10^6 of them)
      auto const rel = [](std::vector<double> const& u, std::vector<double> const& v) {
        double worst = 0, scale = 0;
        for (std::size_t k = 0; k < u.size(); ++k) {
          worst = std::max(worst, std::abs(u[k] - v[k]));
          scale = std::max(scale, std::abs(u[k]));
        }
        return worst / scale;
      };
      CHECK(rel(gx, hx) < 1e-9);
      CHECK(rel(gy, hy) < 1e-12);
    }
  };
  check("soft-dtw", r::measures::soft_dtw(1.0), true);
  check("soft-dtw, log domain", r::measures::soft_dtw(1e-11), true);
  check("soft-msm", r::measures::soft_msm(1.0, 1.0), true);
  check("soft-cdtw", r::measures::soft_cdtw(1.0), false);
}

TEST_CASE("training in a narrow band keeps no full-width checkpoint rows", "[memory]") {
  // past 32 MB the exponential domain's table gave way to checkpoint rows of all m columns,
  // band or not: radius 1, n = m = 150,000 kept 333-662 MB of rows (by the SIMD width) and
  // copied a full row per strip, where the band's table is 34-91 MB (3.5 GB and 43 s
  // at 10^6). Counted here: what operator new allocates (the rows); the table itself is a
  // table_buffer (aligned_alloc), which keeps it whole.
  std::size_t const n = 150000;
  auto const x = random_series(n, 3), y = random_series(n, 4);
  std::vector<double> gx(n), gy(n);
  auto const m = r::measures::soft_dtw(1.0, r::band_spec::radius(1));
  auto const len = static_cast<r::index_t>(n);
  double v = 0;
  std::size_t const heap = peak_of([&] {
    v = r::value_and_grad(m, r::series_view<double const>{x.data(), len, 1},
                          r::series_view<double const>{y.data(), len, 1}, r::series_view<double>{gx.data(), len, 1},
                          r::series_view<double>{gy.data(), len, 1});
  });
  INFO("operator new peak " << heap << " bytes");
  CHECK(heap < (std::size_t(32) << 20));
  CHECK(std::isfinite(v));
  // the value against a long-double recursion over the band (|i - j| <= 1), the gradient against
  // central differences of the value at a few samples
  long double const inf = std::numeric_limits<long double>::infinity();
  std::vector<long double> prev(n + 1, inf), cur(n + 1, inf);
  auto const soft_min = [](long double a, long double b, long double c) {
    long double const lo = std::min({a, b, c});
    if (lo == std::numeric_limits<long double>::infinity()) return lo;
    return lo - std::log(std::exp(lo - a) + std::exp(lo - b) + std::exp(lo - c));
  };
  for (std::size_t i = 0; i < n; ++i) {  // prev[j + 1] = R(i - 1, j); prev[0] = R(i - 1, -1)
    std::fill(cur.begin() + static_cast<std::ptrdiff_t>(i > 1 ? i - 1 : 0), cur.begin() + static_cast<std::ptrdiff_t>(std::min(n, i + 2) + 1), inf);
    for (std::size_t j = i > 0 ? i - 1 : 0; j <= std::min(n - 1, i + 1); ++j) {
      long double const d = (long double)x[i] - y[j];
      long double const diag = i == 0 && j == 0 ? 0.0L : (i > 0 && j > 0 ? prev[j] : inf);
      long double const up = i > 0 ? prev[j + 1] : inf;
      long double const left = j > 0 ? cur[j] : inf;
      cur[j + 1] = d * d + soft_min(diag, up, left);
    }
    std::swap(prev, cur);
  }
  CHECK(std::abs(v - static_cast<double>(prev[n])) <= 1e-11 * std::abs(v));
  for (std::size_t i : {std::size_t(0), n / 2, n - 1})
    CHECK(gx[i] == Approx(central_difference(m, x, r::series_view<double const>{y.data(), len, 1}, i, 1e-5))
                       .epsilon(1e-5).margin(1e-6));
}

TEST_CASE("exponential-domain training in a band keeps the band's part of the rows", "[memory]") {
  // beyond 32 MB of table the exponential-domain backward recomputes each strip from the row
  // above it; those rows spanned all m columns, band or not (radius 64, n = m = 200,000: 6250
  // rows of 200,033 entries in two arrays, 20 GB, so two levels: about 0.5 GB held and a full
  // row copied per strip, half of the time). Now each keeps the band's part, about 2r + 4H.
  std::size_t const n = 200000;
  auto const x = random_series(n, 7), y = random_series(n, 8);
  std::vector<double> gx(n), gy(n);
  auto const m = r::measures::soft_dtw(1.0, r::band_spec::radius(64));
  auto const len = static_cast<r::index_t>(n);
  r::series_view<double const> const xv{x.data(), len, 1}, yv{y.data(), len, 1};
  double v = 0;
  std::size_t const heap = peak_of([&] {
    v = r::value_and_grad(m, xv, yv, r::series_view<double>{gx.data(), len, 1}, r::series_view<double>{gy.data(), len, 1});
  });
  INFO("operator new peak " << heap << " bytes");
  CHECK(heap < (std::size_t(64) << 20));
  CHECK(v == r::value(m, xv, yv));  // both in the exponential domain, the same forward
  // the gradient against central differences of the value at three samples
  for (std::size_t i : {std::size_t(1000), n / 2, n - 1000})
    CHECK(gx[i] == Approx(central_difference(m, x, yv, i, 1e-4)).epsilon(1e-4).margin(1e-4));
}

TEST_CASE("log-domain training in a narrow band of a long pair keeps checkpoints", "[memory]") {
  // beyond 256 MiB of R the log domain keeps the rows above the strips instead; those spanned
  // all m columns, so in a narrow band it kept R whole (hard DTW, radius 1, n = m = 2 * 10^6:
  // a 1 GB table with AVX-512, 0.5 GB with SSE2). Now it keeps the band's part of each row.
  namespace rh = r::host_detail;
  std::size_t const n = 2000000;
  auto const x = random_series(n, 9), y = random_series(n, 10);
  auto const len = static_cast<r::index_t>(n);
  r::series_view<double const> const xv{x.data(), len, 1}, yv{y.data(), len, 1};
  std::vector<double> gx(n), gy(n);
  auto const m = r::measures::dtw(r::band_spec::radius(1));
  rh::workspace<double> ws;
  double const v = rh::value_and_grad(m, xv, yv, r::series_view<double>{gx.data(), len, 1},
                                      r::series_view<double>{gy.data(), len, 1}, 1.0, ws);
  CHECK(ws.table.checkpointed());
  std::size_t const kept = ws.table.cells.capacity() * sizeof(r::simd::pack<double>) +
                           (ws.table.rows.capacity() + ws.table.segment_rows.capacity()) * sizeof(double);
  INFO("table bytes " << kept);
  CHECK(kept < (std::size_t(64) << 20));
  // the value against the band's recursion (|i - j| <= 1), rows of three cells
  double const inf = std::numeric_limits<double>::infinity();
  double a0 = inf, a1 = inf, a2 = inf;  // R(i - 1, i - 2 .. i)
  for (std::size_t i = 0; i < n; ++i) {
    double b0 = inf, b1 = inf, b2 = inf;  // R(i, i - 1 .. i + 1)
    auto const d = [&](std::size_t j) { return (x[i] - y[j]) * (x[i] - y[j]); };
    if (i > 0) b0 = d(i - 1) + std::min({a0, a1});  // diag R(i-1, i-2), up R(i-1, i-1)
    b1 = d(i) + (i == 0 ? 0.0 : std::min({a1, a2, b0}));
    if (i + 1 < n) b2 = d(i + 1) + std::min(a2, b1);
    a0 = b0;
    a1 = b1;
    a2 = b2;
  }
  CHECK(v == Approx(a1).epsilon(1e-12));
  // (the value is quadratic in x_i along the path: exact differences)
  for (std::size_t i : {std::size_t(10), n / 2, n - 10})
    CHECK(gx[i] == Approx(central_difference(m, x, yv, i, 1e-4)).epsilon(1e-5).margin(1e-5));
}

TEST_CASE("alignment paths and matrices of thin pairs keep checkpoints, not a padded table", "[memory]") {
  // the alignment passes kept the whole strip table at any size and in the orientation given:
  // a 1 x 4e6 path kept 1194 MB for an R of 32 MB, a 16000 x 16000 one 1962 MB. The strips
  // now run along the longer series, and past checkpoint_table_bytes the table keeps
  // checkpoint rows (these of 4 + H + 1 values) and one recomputed strip.
  namespace rh = r::host_detail;
  std::size_t const n = 4, m = 4000000;
  auto const x = random_series(n, 5), y = random_series(m, 6);
  r::series_view<double const> const xv{x.data(), static_cast<r::index_t>(n), 1};
  r::series_view<double const> const yv{y.data(), static_cast<r::index_t>(m), 1};
  auto const dtw = r::measures::dtw();
  double const want = r::value(dtw, xv, yv);
  std::size_t const mib = std::size_t(1) << 20;
  auto const table_bytes = [](rh::workspace<double> const& ws) {
    return ws.table.cells.capacity() * sizeof(r::simd::pack<double>) +
           (ws.table.rows.capacity() + ws.table.segment_rows.capacity()) * sizeof(double);
  };
  for (bool swapped : {false, true}) {
    INFO("x first " << !swapped);
    auto const a = swapped ? yv : xv, b = swapped ? xv : yv;
    rh::workspace<double> ws;
    double v = 0;
    auto const path = rh::alignment_path(dtw, a, b, &v, ws);
    CHECK(ws.table.checkpointed());
    INFO("table bytes " << table_bytes(ws));
    CHECK(table_bytes(ws) < 64 * mib);
    CHECK(v == want);
    REQUIRE(path.size() >= m);
    CHECK(path.front() == std::array<r::index_t, 2>{0, 0});
    CHECK(path.back() == std::array<r::index_t, 2>{a.length - 1, b.length - 1});
    double sum = 0;
    bool steps = true;
    for (std::size_t s = 0; s < path.size(); ++s) {
      double const d = a.data[path[s][0]] - b.data[path[s][1]];
      sum += d * d;
      if (s > 0) {
        r::index_t const di = path[s][0] - path[s - 1][0], dj = path[s][1] - path[s - 1][1];
        steps = steps && di >= 0 && dj >= 0 && di <= 1 && dj <= 1 && di + dj > 0;
      }
    }
    CHECK(steps);
    CHECK(sum == Approx(want).epsilon(1e-12));
  }
  rh::workspace<double> ws;
  std::vector<double> e(n * m);
  double const v = rh::alignment_matrix(r::measures::soft_dtw(1.0), xv, yv,
                                        r::matrix_view<double>{e.data(), static_cast<r::index_t>(n), static_cast<r::index_t>(m)}, ws);
  CHECK(ws.table.checkpointed());
  CHECK(table_bytes(ws) < 64 * mib);
  CHECK(v == Approx(r::value(r::measures::soft_dtw(1.0), xv, yv)).epsilon(1e-12));
  double total = 0;  // every column of the 4-row grid is visited: E sums to at least m
  for (double p : e) total += p;
  CHECK(total >= double(m) * (1 - 1e-9));
}

TEST_CASE("pairwise plans its lock-step groups a block of pairs at a time", "[memory]") {
  // the plan held an index per pair, and its grouping another while formed: 1500 x 1500 series
  // of 3 held 16 bytes per pair beside its 8-byte output
  namespace rh = r::host_detail;
  r::index_t const N = 1500, n = 3;
  auto const x = random_series(static_cast<std::size_t>(N * n), 7);
  auto const X = r::make_batch(std::span<double const>(x), N, n);
  std::vector<double> out(static_cast<std::size_t>(N * N));
  auto const soft = r::measures::soft_dtw(1.0);
  std::size_t const bytes = peak_of([&] {
    r::pairwise(r::host.with_threads(2), soft, X, X, r::matrix_view<double>{out.data(), N, N});
  });
  INFO("peak " << bytes << " bytes for " << N * N << " pairs");
  CHECK(bytes < static_cast<std::size_t>(rh::batch_plan_pairs) * 40);
  CHECK(static_cast<std::size_t>(N * N) * 16 > static_cast<std::size_t>(rh::batch_plan_pairs) * 40);
  // the pairs on both sides of each block's end, and a sample elsewhere, have value()'s bits
  bool same = true;
  for (r::index_t k = 0; k < N * N; k += k % rh::batch_plan_pairs < 3 || k % rh::batch_plan_pairs > rh::batch_plan_pairs - 4 ? 1 : 997) {
    double const v = r::value(soft, X[k / N], X[k % N]);
    same = same && std::memcmp(&v, &out[static_cast<std::size_t>(k)], sizeof v) == 0;
  }
  CHECK(same);
}

TEST_CASE("pairwise_grads of one long series against many keeps its partial sums within bounds", "[memory]") {
  // fewer than 64 rows split Y into blocks with a partial gradient each: 16 of a 2^20-sample row
  // would take 128 MiB; they stay within pairwise_grads_block_bytes (the sums: test_batch)
  std::size_t const n = std::size_t(1) << 20, B = 16;
  auto const x = random_series(n, 8), y = random_series(B, 9);
  auto const X = r::make_batch(std::span<double const>(x), 1, static_cast<r::index_t>(n));
  auto const Y = r::make_batch(std::span<double const>(y), static_cast<r::index_t>(B), 1);
  std::vector<double> g(n);
  std::size_t const bytes = peak_of([&] {
    r::pairwise_grads(r::host.with_threads(2), r::measures::soft_dtw(1.0), X, Y, r::make_batch(g, 1, static_cast<r::index_t>(n)));
  });
  INFO("peak " << bytes << " bytes");
  CHECK(bytes < r::detail::pairwise_grads_block_bytes + (std::size_t(16) << 20));
  CHECK(std::all_of(g.begin(), g.end(), [](double v) { return std::isfinite(v); }));
}

TEST_CASE("lock-step training keeps one group's table per worker, also after a smaller group",
          "[memory][lockstep]") {
  // groups run in ascending shape order on a worker; the table's vector grew to twice the larger
  // one (25.4 MiB peak for 130 x 130 then 155 x 155 soft-DTW groups, where the cap is 12 MiB)
  namespace hd = resilin::host_detail;
  constexpr r::index_t G = hd::lockstep_pairs<double>;
  r::index_t const small = 100, large = 150, B = 2 * G;
  std::vector<double> xs, ys;
  std::vector<r::index_t> lengths;
  for (r::index_t b = 0; b < B; ++b) {
    r::index_t const n = b < G ? small : large;
    auto const x = random_series(static_cast<std::size_t>(n), 10 + static_cast<unsigned>(b));
    auto const y = random_series(static_cast<std::size_t>(n), 20 + static_cast<unsigned>(b));
    xs.insert(xs.end(), x.begin(), x.end());
    xs.resize(static_cast<std::size_t>((b + 1) * large), 0.0);
    ys.insert(ys.end(), y.begin(), y.end());
    ys.resize(static_cast<std::size_t>((b + 1) * large), 0.0);
    lengths.push_back(n);
  }
  auto const X = r::make_batch(std::span<double const>(xs), B, large, 1, std::span<r::index_t const>(lengths));
  auto const Y = r::make_batch(std::span<double const>(ys), B, large, 1, std::span<r::index_t const>(lengths));
  std::vector<double> out(static_cast<std::size_t>(B)), gx(xs.size()), gy(ys.size());
  auto const m = r::measures::soft_dtw(1.0);
  REQUIRE(hd::plan_lockstep<double>(m, B, [&](r::index_t b) { return std::pair{X[b], Y[b]}; }, 1, true).grouped.size() ==
          static_cast<std::size_t>(B));
  std::size_t const bytes = peak_of([&] {
    r::values_and_grads(r::host.with_threads(1), m, X, Y, std::span<double>(out),
                        r::make_batch(std::span<double>(gx), B, large, 1, std::span<r::index_t const>(lengths)),
                        r::make_batch(std::span<double>(gy), B, large, 1, std::span<r::index_t const>(lengths)));
  });
  std::size_t const table = hd::lockstep_table_bytes<double>(large, large);
  INFO("peak " << bytes << " bytes, the larger group's table " << table);
  CHECK(bytes <= table + table / 8);
}
#endif
