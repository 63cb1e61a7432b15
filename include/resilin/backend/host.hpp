#pragma once
// The host backend object: resilin::host (all cores) or resilin::host.with_threads(n).
#include <resilin/core/concepts.hpp>
#include <resilin/core/error.hpp>

namespace resilin {

struct host_backend {
  using memory_space = host_memory;
  int threads = 0;  // 0: every hardware thread

  /// The same backend capped at n threads (n >= 1; 0 means all).
  host_backend with_threads(int n) const {
    detail::require(n >= 0, "threads must be >= 0 (0 = all cores), got ", n);
    return host_backend{n};
  }
};

inline constexpr host_backend host{};

static_assert(execution_backend<host_backend>);

}  // namespace resilin
