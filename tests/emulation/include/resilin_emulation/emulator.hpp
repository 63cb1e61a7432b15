#pragma once
// A CUDA device emulated on the host, for tests only: the library's CUDA sources compile as
// plain C++ (RESILIN_CUDA_EMULATION, this header forced first, tests/emulation/include ahead of
// the toolkit's headers) and their kernels run on the CPU, so a machine without a GPU still
// executes the launch code, the workspace carving and every kernel, and compares them with
// the host code.
//
// The model. Device memory is host memory (cudaMalloc fills new blocks with 0xFF bytes, NaN in
// every float type, as a GPU leaves garbage, or finite negative bytes with
// RESILIN_EMULATION_FILL=negative; guard bytes around each block are checked when it is
// freed). Streams run each call at once, in order, except while capturing a graph, which
// records the calls for cudaGraphLaunch. A launch runs its blocks one after another; the
// threads of a block are fibers on the calling thread. A fiber runs until it
// reaches a barrier (__syncthreads, __syncwarp, a shuffle) or returns; a barrier opens when
// every live thread of the block (of the warp) waits at it; a block whose live threads wait at
// different barriers is a deadlock, reported and aborted. Shared memory is one static per
// __shared__ variable (the blocks of every launch take turns: launches are serialised), the
// dynamic part a guarded buffer of exactly the launch's size. Atomics are plain read-modify-writes
// (one fiber runs at a time). Between two barriers the threads run in ascending order, or in
// descending order with RESILIN_EMULATION_ORDER=reverse: a result that changes with the order
// reads what another thread writes without a barrier between them. The same variable runs the
// blocks of a launch in descending order too (a result that changes then reads, within one
// launch, what another block writes), and every block starts with fresh bytes in its dynamic
// shared memory (a result that turns NaN, or wrong with the negative fill, reads shared memory
// before any thread wrote it).
// A shuffle fails unless every lane its mask names takes part in it with the same mask.
//
// Launch checks as on a device of compute capability 9.0 (an H200): at most 1024 threads per
// block, grid y and z at most 65535, dynamic shared memory at most 48 KiB unless
// cudaFuncSetAttribute raised the kernel's limit, and never above 227 KiB.
// What it does not model: concurrency between blocks or streams (blocks run one at a time),
// the memory model, the static shared memory limit, register pressure and __launch_bounds__,
// timing.
#include <ucontext.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// ---- the CUDA C++ dialect -------------------------------------------------------------------
#define __host__
#define __device__
#define __global__
#define __forceinline__ inline __attribute__((always_inline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
#define __restrict__ __restrict
#define __shared__ static

struct uint3 {
  unsigned int x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned int x = 1, y = 1, z = 1;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) noexcept : x(vx), y(vy), z(vz) {}
};

namespace resilin_emulation {

inline constexpr int warp_size = 32;
inline constexpr std::size_t default_shared_limit = 48 * 1024;
inline constexpr std::size_t optin_shared_limit = 227 * 1024;  // sm_90
inline constexpr int multiprocessors = 132;                     // H200
inline constexpr std::size_t fiber_stack_bytes = 256 * 1024;

[[noreturn]] inline void fail(std::string const& what) {
  std::fprintf(stderr, "resilin emulated device: %s\n", what.c_str());
  std::abort();
}

enum class wait { running, block, warp, done };

// Switching fibers. On x86-64 a few instructions that save the callee-saved registers and the
// floating-point control words on the old stack and restore them from the new one
// (swapcontext also saves the signal mask, a system call per switch: the emulated tests ran
// 6 to 9 times slower with it);
// elsewhere, or with RESILIN_EMULATION_UCONTEXT defined, ucontext.
#if defined(__x86_64__) && defined(__linux__) && !defined(RESILIN_EMULATION_UCONTEXT)
#  define RESILIN_EMULATION_FAST_SWITCH 1
// resilin_emulation_switch(void** save_sp, void* load_sp); weak, as every test's translation
// units define it
asm(R"(
  .text
  .weak resilin_emulation_switch
  .type resilin_emulation_switch, @function
resilin_emulation_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size resilin_emulation_switch, .-resilin_emulation_switch
)");
extern "C" void resilin_emulation_switch(void** save_sp, void* load_sp);
/// A suspended execution: its stack pointer.
struct context {
  void* sp = nullptr;
};
#else
#  define RESILIN_EMULATION_FAST_SWITCH 0
struct context {
  ucontext_t uc{};
};
#endif

/// Suspends the execution that calls it into `save` and resumes `load`.
inline void switch_context(context& save, context& load) {
#if RESILIN_EMULATION_FAST_SWITCH
  resilin_emulation_switch(&save.sp, load.sp);
#else
  if (swapcontext(&save.uc, &load.uc) != 0) fail("swapcontext failed");
#endif
}

struct fiber {
  std::unique_ptr<char[]> stack;
  uint3 index;
  wait state = wait::running;
  context suspended;
};

/// The block being run on this thread.
struct block_run {
  uint3 block_index;
  dim3 block_dim, grid_dim;
  std::vector<fiber>* threads = nullptr;
  int count = 0;
  int current = -1;
  context scheduler;
  std::function<void()> const* body = nullptr;
  unsigned char* dynamic_shared = nullptr;
  std::vector<unsigned char> exchange;  // 16 bytes per thread: the warp shuffles' mailbox
  std::vector<unsigned> shuffle_masks;  // per thread: the mask of the shuffle it is in, else 0
};

inline thread_local block_run* running = nullptr;
inline thread_local std::vector<fiber> fiber_pool;  // stacks kept between blocks and launches

inline block_run& current_block() {
  if (!running) fail("a device function (threadIdx, __syncthreads, a shuffle) was called outside a kernel");
  return *running;
}

/// Back to the scheduler until the barrier `w` opens.
inline void block_until(wait w) {
  block_run& b = current_block();
  fiber& f = (*b.threads)[static_cast<std::size_t>(b.current)];
  f.state = w;
  switch_context(f.suspended, b.scheduler);
}

/// A fiber's life: the kernel, then back to the scheduler for good.
[[noreturn]] inline void fiber_main() {
  block_run& b = current_block();
  (*b.body)();
  fiber& f = (*b.threads)[static_cast<std::size_t>(b.current)];
  f.state = wait::done;
  switch_context(f.suspended, b.scheduler);
  fail("a returned thread was resumed");
}

/// Prepares fiber f to start in fiber_main at its first switch.
inline void start_fiber(fiber& f) {
#if RESILIN_EMULATION_FAST_SWITCH
  // the frame resilin_emulation_switch pops: control words, six registers, return address
  auto top = reinterpret_cast<std::uintptr_t>(f.stack.get() + fiber_stack_bytes) & ~std::uintptr_t{15};
  auto* sp = reinterpret_cast<std::uint64_t*>(top - 16);  // fiber_main entered as if called
  *sp = reinterpret_cast<std::uint64_t>(&fiber_main);
  sp -= 6;
  std::fill(sp, sp + 6, std::uint64_t{0});
  sp -= 1;
  std::uint32_t const control[2] = {0x1F80u, 0x037Fu};  // MXCSR and x87 control word at reset
  std::memcpy(sp, control, sizeof control);
  f.suspended.sp = sp;
#else
  ucontext_t& uc = f.suspended.uc;
  if (getcontext(&uc) != 0) fail("getcontext failed");
  uc.uc_stack.ss_sp = f.stack.get();
  uc.uc_stack.ss_size = fiber_stack_bytes;
  uc.uc_link = nullptr;
  makecontext(&uc, reinterpret_cast<void (*)()>(&fiber_main), 0);
#endif
}

/// Whether the environment variable `name` holds `value`.
inline bool env_is(char const* name, char const* value) {
  char const* v = std::getenv(name);
  return v != nullptr && std::string(v) == value;
}

/// Whether threads run in descending order between barriers (RESILIN_EMULATION_ORDER=reverse).
inline bool reverse_order() {
  static bool const reverse = env_is("RESILIN_EMULATION_ORDER", "reverse");
  return reverse;
}

/// Runs one block: every thread until all have returned.
inline void run_block(block_run& b) {
  int const n = b.count;
  std::vector<fiber>& threads = fiber_pool;
  if (threads.size() < static_cast<std::size_t>(n)) threads.resize(static_cast<std::size_t>(n));
  b.threads = &threads;
  b.exchange.assign(static_cast<std::size_t>(n) * 16, 0);
  b.shuffle_masks.assign(static_cast<std::size_t>(n), 0u);
  for (int t = 0; t < n; ++t) {
    fiber& f = threads[static_cast<std::size_t>(t)];
    if (!f.stack) f.stack.reset(new char[fiber_stack_bytes]);
    f.index = {static_cast<unsigned>(t) % b.block_dim.x, static_cast<unsigned>(t) / b.block_dim.x % b.block_dim.y,
               static_cast<unsigned>(t) / (b.block_dim.x * b.block_dim.y)};
    f.state = wait::running;
    start_fiber(f);
  }
  bool const reverse = reverse_order();
  for (;;) {
    for (int k = 0; k < n; ++k) {
      int const t = reverse ? n - 1 - k : k;
      fiber& f = threads[static_cast<std::size_t>(t)];
      if (f.state != wait::running) continue;
      b.current = t;
      switch_context(b.scheduler, f.suspended);
    }
    b.current = -1;
    // every thread now waits or has returned: open the barriers whose live threads all wait
    bool opened = false, live = false;
    for (int w0 = 0; w0 < n; w0 += warp_size) {
      int const w1 = std::min(n, w0 + warp_size);
      bool any = false, all_warp = true;
      for (int t = w0; t < w1; ++t) {
        wait const s = threads[static_cast<std::size_t>(t)].state;
        if (s == wait::done) continue;
        any = true;
        all_warp = all_warp && s == wait::warp;
      }
      live = live || any;
      if (any && all_warp) {
        for (int t = w0; t < w1; ++t)
          if (threads[static_cast<std::size_t>(t)].state == wait::warp) threads[static_cast<std::size_t>(t)].state = wait::running;
        opened = true;
      }
    }
    if (!live) return;
    if (opened) continue;
    bool all_block = true;
    for (int t = 0; t < n; ++t) {
      wait const s = threads[static_cast<std::size_t>(t)].state;
      all_block = all_block && (s == wait::done || s == wait::block);
    }
    if (!all_block)
      fail("deadlock in block (" + std::to_string(b.block_index.x) + ", " + std::to_string(b.block_index.y) +
           "): its live threads wait at different barriers (__syncthreads against __syncwarp or a shuffle)");
    for (int t = 0; t < n; ++t)
      if (threads[static_cast<std::size_t>(t)].state == wait::block) threads[static_cast<std::size_t>(t)].state = wait::running;
  }
}

// ---- memory ---------------------------------------------------------------------------------

inline constexpr std::size_t guard_bytes = 256;  // also cudaMalloc's alignment
inline constexpr unsigned char guard_value = 0xA5;
/// The bytes new device memory and every block's dynamic shared memory start with: 0xFF (NaN
/// in every float type) by default; 0xC7 with RESILIN_EMULATION_FILL=negative (finite and
/// large negative: about -1e5 in float, -5e37 in double, negative as an integer), which a
/// minimum keeps where math::min drops a NaN in its second operand, so an uninitialised read
/// on a hard-min path changes the result instead of vanishing.
inline unsigned char fresh_value() {
  static unsigned char const value = env_is("RESILIN_EMULATION_FILL", "negative") ? 0xC7 : 0xFF;
  return value;
}

struct allocation {
  std::size_t bytes;
  unsigned char* base;  // guard, data, guard
};

struct device_state {
  std::mutex launch_mutex;  // launches (and their statics) take turns
  std::mutex memory_mutex;
  std::map<std::uintptr_t, allocation> blocks;  // by data address
  std::map<void const*, std::size_t> shared_limits;  // cudaFuncSetAttribute
};
inline device_state& state() {
  static device_state s;
  return s;
}

inline void* allocate(std::size_t bytes) {
  std::size_t const total = bytes + 2 * guard_bytes;
  auto* base = static_cast<unsigned char*>(std::aligned_alloc(guard_bytes, (total + guard_bytes - 1) / guard_bytes * guard_bytes));
  if (!base) return nullptr;
  std::memset(base, guard_value, guard_bytes);
  std::memset(base + guard_bytes, fresh_value(), bytes);
  std::memset(base + guard_bytes + bytes, guard_value, guard_bytes);
  unsigned char* const data = base + guard_bytes;
  std::lock_guard lock(state().memory_mutex);
  state().blocks[reinterpret_cast<std::uintptr_t>(data)] = {bytes, base};
  return data;
}

/// Whether p points into a device allocation.
inline bool is_device_pointer(void const* p) {
  auto const a = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard lock(state().memory_mutex);
  auto it = state().blocks.upper_bound(a);
  if (it == state().blocks.begin()) return false;
  --it;
  return a < it->first + std::max<std::size_t>(it->second.bytes, 1);
}

inline bool release(void* p) {
  if (!p) return true;
  allocation a{};
  {
    std::lock_guard lock(state().memory_mutex);
    auto it = state().blocks.find(reinterpret_cast<std::uintptr_t>(p));
    if (it == state().blocks.end()) return false;
    a = it->second;
    state().blocks.erase(it);
  }
  for (std::size_t k = 0; k < guard_bytes; ++k)
    if (a.base[k] != guard_value || a.base[guard_bytes + a.bytes + k] != guard_value)
      fail("a kernel or copy wrote outside a device allocation of " + std::to_string(a.bytes) + " bytes (" +
           (a.base[k] != guard_value ? "before" : "after") + " it)");
  std::free(a.base);
  return true;
}

// ---- streams and graphs ---------------------------------------------------------------------

struct graph {
  std::vector<std::function<void()>> calls;
};
struct stream {
  graph* capture = nullptr;  // capturing: calls are recorded here
};

/// Runs a stream-ordered call now, or records it while `s` captures a graph.
inline void submit(stream* s, std::function<void()> call) {
  if (s && s->capture) s->capture->calls.push_back(std::move(call));
  else call();
}

}  // namespace resilin_emulation

// ---- the runtime API --------------------------------------------------------------------------

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInsufficientDriver = 35,
  cudaErrorNotSupported = 801,
  cudaErrorStreamCaptureUnsupported = 900,
};
using cudaError = cudaError_t;
using cudaStream_t = resilin_emulation::stream*;
using cudaGraph_t = resilin_emulation::graph*;
using cudaGraphExec_t = resilin_emulation::graph*;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1, cudaStreamCaptureModeRelaxed = 2 };
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrPageableMemoryAccess = 88,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrMemoryPoolsSupported = 115,
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaMemoryType { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1, cudaMemoryTypeDevice = 2, cudaMemoryTypeManaged = 3 };
struct cudaPointerAttributes {
  cudaMemoryType type = cudaMemoryTypeUnregistered;
  int device = 0;
  void* devicePointer = nullptr;
  void* hostPointer = nullptr;
};
inline constexpr unsigned int cudaStreamDefault = 0, cudaStreamNonBlocking = 1;

namespace resilin_emulation {
inline cudaError_t& last_error() {
  static thread_local cudaError_t e = cudaSuccess;
  return e;
}
inline cudaError_t fails(cudaError_t e) {
  if (e != cudaSuccess) last_error() = e;
  return e;
}
}  // namespace resilin_emulation

inline cudaError_t cudaGetLastError() {
  cudaError_t const e = resilin_emulation::last_error();
  resilin_emulation::last_error() = cudaSuccess;
  return e;
}
inline char const* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorNotSupported: return "cudaErrorNotSupported";
    default: return "cudaErrorUnknown";
  }
}
inline char const* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorNotSupported: return "operation not supported";
    default: return "unknown error (emulated device)";
  }
}

inline cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return resilin_emulation::fails(cudaErrorInvalidValue);
  *count = 1;
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int* device) {
  if (!device) return resilin_emulation::fails(cudaErrorInvalidValue);
  *device = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDriverGetVersion(int* v) {
  if (!v) return resilin_emulation::fails(cudaErrorInvalidValue);
  *v = 13000;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!value || device != 0) return resilin_emulation::fails(cudaErrorInvalidValue);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = static_cast<int>(resilin_emulation::default_shared_limit); break;
    case cudaDevAttrMultiProcessorCount: *value = resilin_emulation::multiprocessors; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrPageableMemoryAccess: *value = 0; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(resilin_emulation::optin_shared_limit); break;
    case cudaDevAttrMemoryPoolsSupported: *value = 1; break;
    default: return resilin_emulation::fails(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

inline cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  if (!p) return resilin_emulation::fails(cudaErrorInvalidValue);
  *p = resilin_emulation::allocate(bytes);
  return *p ? cudaSuccess : resilin_emulation::fails(cudaErrorMemoryAllocation);
}
template <class T>
inline cudaError_t cudaMalloc(T** p, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
inline cudaError_t cudaFree(void* p) {
  return resilin_emulation::release(p) ? cudaSuccess : resilin_emulation::fails(cudaErrorInvalidDevicePointer);
}
inline cudaError_t cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t) { return cudaMalloc(p, bytes); }
template <class T>
inline cudaError_t cudaMallocAsync(T** p, std::size_t bytes, cudaStream_t s) {
  return cudaMallocAsync(reinterpret_cast<void**>(p), bytes, s);
}
inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return cudaFree(p); }
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, void const* p) {
  if (!a) return resilin_emulation::fails(cudaErrorInvalidValue);
  *a = {};
  if (resilin_emulation::is_device_pointer(p)) {
    a->type = cudaMemoryTypeDevice;
    a->devicePointer = const_cast<void*>(p);
  }
  return cudaSuccess;
}

inline cudaError_t cudaMemcpyAsync(void* dst, void const* src, std::size_t bytes, cudaMemcpyKind, cudaStream_t s = nullptr) {
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src) return resilin_emulation::fails(cudaErrorInvalidValue);
  resilin_emulation::submit(s, [=] { std::memmove(dst, src, bytes); });
  return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void* dst, void const* src, std::size_t bytes, cudaMemcpyKind kind) {
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}
inline cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t s = nullptr) {
  if (bytes == 0) return cudaSuccess;
  if (!dst) return resilin_emulation::fails(cudaErrorInvalidValue);
  resilin_emulation::submit(s, [=] { std::memset(dst, value, bytes); });
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* dst, int value, std::size_t bytes) { return cudaMemsetAsync(dst, value, bytes, nullptr); }

inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) {
  if (!s) return resilin_emulation::fails(cudaErrorInvalidValue);
  *s = new resilin_emulation::stream();
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }
inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
  delete s;
  return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  if (!s || s->capture) return resilin_emulation::fails(cudaErrorStreamCaptureUnsupported);
  s->capture = new resilin_emulation::graph();
  return cudaSuccess;
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* g) {
  if (!s || !s->capture || !g) return resilin_emulation::fails(cudaErrorInvalidValue);
  *g = s->capture;
  s->capture = nullptr;
  return cudaSuccess;
}
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* e, cudaGraph_t g, unsigned long long = 0) {
  if (!e || !g) return resilin_emulation::fails(cudaErrorInvalidValue);
  *e = new resilin_emulation::graph(*g);
  return cudaSuccess;
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s) {
  if (!e) return resilin_emulation::fails(cudaErrorInvalidValue);
  for (auto const& call : e->calls) resilin_emulation::submit(s, call);
  return cudaSuccess;
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) {
  delete e;
  return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t g) {
  delete g;
  return cudaSuccess;
}

template <class F>
inline cudaError_t cudaFuncSetAttribute(F* kernel, cudaFuncAttribute attr, int value) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || value < 0 ||
      static_cast<std::size_t>(value) > resilin_emulation::optin_shared_limit)
    return resilin_emulation::fails(cudaErrorInvalidValue);
  std::lock_guard lock(resilin_emulation::state().launch_mutex);
  resilin_emulation::state().shared_limits[reinterpret_cast<void const*>(kernel)] = static_cast<std::size_t>(value);
  return cudaSuccess;
}

// ---- kernels: launch, thread indices, barriers, shuffles, atomics, intrinsics ---------------

namespace resilin_emulation {

/// A kernel launch: the configuration, then the arguments (RESILIN_LAUNCH(...)(args...)).
template <class... P>
struct launcher {
  void (*kernel)(P...);
  dim3 grid, block;
  std::size_t shared;
  cudaStream_t stream;

  template <class... A>
  void operator()(A&&... args) const {
    static_assert(sizeof...(A) == sizeof...(P), "kernel launched with the wrong number of arguments");
    std::size_t const threads = std::size_t{block.x} * block.y * block.z;
    if (threads == 0 || threads > 1024 || grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 ||
        grid.z > 65535 || grid.x > 0x7FFFFFFFu) {
      fails(cudaErrorInvalidConfiguration);
      return;
    }
    std::size_t limit = default_shared_limit;
    {
      std::lock_guard lock(state().launch_mutex);
      auto const it = state().shared_limits.find(reinterpret_cast<void const*>(kernel));
      if (it != state().shared_limits.end()) limit = std::max(limit, it->second);
    }
    if (shared > limit) {
      fails(cudaErrorInvalidValue);
      return;
    }
    // the parameters are copied once at the launch, as a device receives them
    auto params = std::make_shared<std::tuple<P...>>(std::forward<A>(args)...);
    auto const k = kernel;
    dim3 const g = grid, b = block;
    std::size_t const bytes = shared;
    submit(stream, [k, g, b, bytes, params] { execute(k, g, b, bytes, *params); });
  }

  static void execute(void (*k)(P...), dim3 g, dim3 b, std::size_t bytes, std::tuple<P...> const& params) {
    std::lock_guard lock(state().launch_mutex);
    // guarded like device memory: a block that writes past its dynamic shared memory fails
    std::unique_ptr<void, bool (*)(void*)> const dynamic(allocate(bytes), &release);
    if (!dynamic) fail("no host memory for " + std::to_string(bytes) + " bytes of dynamic shared memory");
    std::function<void()> const body = [&] { std::apply(k, params); };
    block_run* const outer = running;
    std::size_t const blocks = std::size_t{g.x} * g.y * g.z;
    bool const reverse = reverse_order();
    for (std::size_t done = 0; done < blocks; ++done) {
      std::size_t const linear = reverse ? blocks - 1 - done : done;
      block_run run;
      run.block_index = {static_cast<unsigned>(linear % g.x), static_cast<unsigned>(linear / g.x % g.y),
                         static_cast<unsigned>(linear / (std::size_t{g.x} * g.y))};
      run.block_dim = b;
      run.grid_dim = g;
      run.count = static_cast<int>(b.x * b.y * b.z);
      run.body = &body;
      // each block finds fresh bytes, not the previous block's data, in its dynamic shared memory
      std::memset(dynamic.get(), fresh_value(), bytes);
      run.dynamic_shared = static_cast<unsigned char*>(dynamic.get());
      running = &run;
      run_block(run);
    }
    running = outer;
  }
};

template <class... P>
launcher<P...> launch(void (*kernel)(P...), dim3 grid, dim3 block, std::size_t shared, cudaStream_t stream) {
  return {kernel, grid, block, shared, stream};
}

inline uint3 const& thread_index() {
  block_run& b = current_block();
  return (*b.threads)[static_cast<std::size_t>(b.current)].index;
}
inline uint3 const& block_index() { return current_block().block_index; }
inline dim3 const& block_dim() { return current_block().block_dim; }
inline dim3 const& grid_dim() { return current_block().grid_dim; }
inline unsigned char* dynamic_shared_memory() { return current_block().dynamic_shared; }

/// Exchanges v across the warp: every live lane posts, then reads lane `from(lane)`.
template <class T, class From>
T shuffle(unsigned mask, T v, From from) {
  static_assert(sizeof(T) <= 16 && std::is_trivially_copyable_v<T>);
  block_run& b = current_block();
  int const me = b.current, base = me - me % warp_size;
  if (((mask >> (me - base)) & 1u) == 0) fail("a shuffle by a lane outside its own mask");
  std::memcpy(b.exchange.data() + 16 * static_cast<std::size_t>(me), &v, sizeof(T));
  b.shuffle_masks[static_cast<std::size_t>(me)] = mask;
  block_until(wait::warp);
  // Every lane the mask names must take part in this shuffle with the same mask (sm_70 and
  // later: a named lane that has returned, does not exist, waits at __syncwarp or shuffles with
  // another mask is undefined behaviour on the GPU, where the warp barrier here would open).
  for (int l = 0; l < warp_size; ++l) {
    if (((mask >> l) & 1u) == 0) continue;
    if (base + l >= b.count) fail("a shuffle's mask names lane " + std::to_string(l) + ", beyond the block's threads");
    if ((*b.threads)[static_cast<std::size_t>(base + l)].state == wait::done)
      fail("a shuffle's mask names lane " + std::to_string(l) + ", which has returned");
    if (b.shuffle_masks[static_cast<std::size_t>(base + l)] != mask)
      fail("a shuffle's mask names lane " + std::to_string(l) + ", which is not in a shuffle with the same mask");
  }
  int const src = from(me - base);
  if (base + src >= b.count || (*b.threads)[static_cast<std::size_t>(base + src)].state == wait::done)
    fail("a shuffle reads lane " + std::to_string(src) + ", which has returned or does not exist");
  T r;
  std::memcpy(&r, b.exchange.data() + 16 * static_cast<std::size_t>(base + src), sizeof(T));
  block_until(wait::warp);
  b.shuffle_masks[static_cast<std::size_t>(me)] = 0u;
  return r;
}

}  // namespace resilin_emulation

#define threadIdx (::resilin_emulation::thread_index())
#define blockIdx (::resilin_emulation::block_index())
#define blockDim (::resilin_emulation::block_dim())
#define gridDim (::resilin_emulation::grid_dim())
#define warpSize 32

inline void __syncthreads() { resilin_emulation::block_until(resilin_emulation::wait::block); }
inline void __syncwarp(unsigned = 0xffffffffu) { resilin_emulation::block_until(resilin_emulation::wait::warp); }

template <class T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  return resilin_emulation::shuffle(mask, v, [=](int l) { return l / width * width + ((src % width) + width) % width; });
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return resilin_emulation::shuffle(mask, v, [=](int l) {
    int const s = l - static_cast<int>(delta);
    return s < l / width * width ? l : s;
  });
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return resilin_emulation::shuffle(mask, v, [=](int l) {
    int const s = l + static_cast<int>(delta);
    return s >= (l / width + 1) * width ? l : s;
  });
}

template <class T>
T atomicAdd(T* p, T v) {
  T const old = *p;
  *p = old + v;
  return old;
}
template <class T>
T atomicOr(T* p, T v) {
  T const old = *p;
  *p = old | v;
  return old;
}
template <class T>
T __ldg(T const* p) {
  return *p;
}
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  std::uint64_t const both = (std::uint64_t{y} << 32) | x;
  unsigned int r = 0;
  for (int k = 0; k < 4; ++k) r |= static_cast<unsigned int>((both >> (8 * ((s >> (4 * k)) & 7u))) & 0xFFu) << (8 * k);
  return r;
}
// the device's integer and floating-point min and max (CUDA declares them globally)
template <class A, class B>
  requires std::is_arithmetic_v<A> && std::is_arithmetic_v<B>
std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(b) < static_cast<C>(a) ? static_cast<C>(b) : static_cast<C>(a);
}
template <class A, class B>
  requires std::is_arithmetic_v<A> && std::is_arithmetic_v<B>
std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(b) : static_cast<C>(a);
}

/// RESILIN_LAUNCH(grid, block, shared bytes, stream, kernel)(arguments...)
#define RESILIN_EMULATED_LAUNCH(grid, block, shared, stream, ...) \
  ::resilin_emulation::launch(+(__VA_ARGS__), grid, block, shared, stream)
