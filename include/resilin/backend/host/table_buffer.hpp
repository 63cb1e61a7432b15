#pragma once
// Storage for the tables a training forward writes and its backward reads: uninitialised (every
// entry read is written first, so zero-filling would only cost a pass over memory), grown only
// when a larger table is needed, and for large tables aligned to 2 MiB and offered to the kernel
// as transparent huge pages (Linux), so the first touch of a fresh table costs one page fault
// per 2 MiB instead of per 4 KiB. Host only.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <resilin/backend/host/simd_abi.hpp>

namespace resilin::host_detail::inline RESILIN_HOST_ABI {

template <class V>
class table_buffer {
  static_assert(std::is_trivially_copyable_v<V> && std::is_trivially_destructible_v<V>);
  static constexpr std::size_t huge_page = std::size_t(2) << 20;
  struct release {
    void operator()(V* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<V, release> data_;
  std::size_t capacity_ = 0;

 public:
  /// Room for at least `count` entries; their values are unspecified (previous contents are not
  /// kept when the buffer grows).
  V* reserve(std::size_t count) {
    if (count > capacity_) {
      data_.reset();
      capacity_ = 0;
      std::size_t const bytes = count * sizeof(V);
      std::size_t const align = bytes >= huge_page ? huge_page : alignof(std::max_align_t) * 4;
      std::size_t const rounded = (bytes + align - 1) / align * align;
      void* const p = std::aligned_alloc(align, rounded);
      if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
      if (align == huge_page) ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint; failure is harmless
#endif
      data_.reset(static_cast<V*>(p));
      capacity_ = rounded / sizeof(V);
    }
    return data_.get();
  }
  /// Entries the buffer holds now.
  std::size_t capacity() const noexcept { return capacity_; }
  V* data() noexcept { return data_.get(); }
  V const* data() const noexcept { return data_.get(); }
};

}  // namespace resilin::host_detail
