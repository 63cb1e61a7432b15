// A failed encode (an allocation that fails part way) leaves the encoded tensor or the
// compressed_tensor without contents, never half written: before, the object kept the new
// tensor's count and book with the old tensor's planes or stream, and to_container() wrote a
// checksummed container that the decoder then refused as corrupt. This program replaces the
// global operator new with one that can fail at the N-th allocation (its own executable, so no
// other test sees it).
#include <atomic>
#include <cstdlib>
#include <new>
#include <span>
#include <string>
#include <vector>
#include <support/catch.hpp>

#include "test_util.hpp"

namespace {
std::atomic<long> countdown{-1};  // < 0: never fail; else the allocations left before one fails

void* allocate(std::size_t n, std::size_t align, bool nothrow) {
  long left = countdown.load();
  while (left >= 0 && !countdown.compare_exchange_weak(left, left - 1)) {
  }
  if (left == 0) {
    if (nothrow) return nullptr;
    throw std::bad_alloc();
  }
  std::size_t const a = align < alignof(std::max_align_t) ? alignof(std::max_align_t) : align;
  void* const p = std::aligned_alloc(a, (n + a - 1) / a * a + (n == 0 ? a : 0));
  if (!p && !nothrow) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) { return allocate(n, 0, false); }
void* operator new[](std::size_t n) { return allocate(n, 0, false); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a), false); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a), false); }
void* operator new(std::size_t n, std::nothrow_t const&) noexcept {
  try { return allocate(n, 0, true); } catch (...) { return nullptr; }
}
void* operator new[](std::size_t n, std::nothrow_t const&) noexcept {
  try { return allocate(n, 0, true); } catch (...) { return nullptr; }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

using namespace lct_test;

TEST_CASE("a failed encode leaves no contents, and the next encode works", "[lct][failure]") {
  auto const a = gaussian_bf16(70000, 0.03f, 1), b = gaussian_bf16(140000, 0.5f, 2);
  lct::encode_options eo;
  eo.chunk_log2 = 10;
  eo.max_threads = 2;
  int failures = 0;
  for (long n = 0; n < 10000; ++n) {
    INFO("allocation " << n << " fails");
    lct::compressed_tensor ct(lct::dtype::bf16, {eo, {}, {}, true});
    ct.encode(std::span<std::uint16_t const>(a));
    lct::encoded_tensor e;
    lct::encode(lct::dtype::bf16, a.data(), a.size(), nullptr, e, eo);
    bool failed = false;
    countdown.store(n);
    try {
      ct.encode(std::span<std::uint16_t const>(b));
    } catch (std::bad_alloc const&) {
      failed = true;
    }
    countdown.store(-1);
    if (!failed) {  // every allocation point tried: the last encode succeeded
      std::vector<std::uint16_t> out(b.size());
      ct.decode_into(std::span<std::uint16_t>(out));
      CHECK(out == b);
      break;
    }
    ++failures;
    CHECK(ct.size() == 0);
    CHECK(ct.compressed_bytes() == 0);
    CHECK_THROWS_WITH(ct.to_container(), Catch::Matchers::Contains("nothing encoded yet"));
    CHECK_THROWS_WITH(ct.decode_to_scratch(), Catch::Matchers::Contains("nothing encoded yet"));
    ct.encode(std::span<std::uint16_t const>(a));  // usable again
    std::vector<std::uint16_t> back(a.size());
    lct::decode_container(ct.to_container(), back.data(), back.size() * 2);
    CHECK(back == a);
    // the free function the same way, on a tensor that held a
    countdown.store(n);
    failed = false;
    try {
      lct::encode(lct::dtype::bf16, b.data(), b.size(), nullptr, e, eo);
    } catch (std::bad_alloc const&) {
      failed = true;
    }
    countdown.store(-1);
    if (failed) {
      CHECK(e.count == 0);
      CHECK(e.book.empty());
      CHECK_THROWS_WITH(lct::to_container(e), Catch::Matchers::Contains("missing codebook"));
    }
  }
  CHECK(failures >= 2);  // the reused buffers grow: the raw plane and the stream
}
