// The emulated device's own checks must fire: each case launches a kernel with one misuse that
// the emulator reports (then aborts; the SIGABRT handler turns that into exit 3 so that CTest
// matches the report, PASS_REGULAR_EXPRESSION). Case "valid" is the same kernels used correctly
// and must print "ok"; case "fill" prints the first byte of new device memory
// (RESILIN_EMULATION_FILL). Built only for the emulated device (host C++ with emulator.hpp forced).
#include <csignal>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <resilin/core/config.hpp>

namespace {

// the sum of the lane numbers of the first `width` lanes, by shuffles within `width` lanes;
// lanes >= width return first when `early_return` is set
__global__ void lane_sum(float* out, int width, bool early_return, unsigned mask) {
  unsigned const lane = threadIdx.x % 32;
  if (early_return && static_cast<int>(lane) >= width) return;
  float v = static_cast<float>(lane);
  for (int offset = width / 2; offset > 0; offset /= 2) v += __shfl_down_sync(mask, v, offset, width);
  if (lane == 0) out[blockIdx.x] = v;
}

// half the warp shuffles, the other half waits at __syncwarp
__global__ void shuffle_against_syncwarp(float* out) {
  unsigned const lane = threadIdx.x % 32;
  float v = static_cast<float>(lane);
  if (lane < 16) v = __shfl_sync(0xffffffffu, v, 0);
  else __syncwarp();
  out[threadIdx.x] = v;
}

// the two halves shuffle with different masks (each names the other half)
__global__ void different_masks(float* out) {
  unsigned const lane = threadIdx.x % 32;
  unsigned const mask = lane < 16 ? 0xffffffffu : 0xffff7fffu;
  out[threadIdx.x] = __shfl_sync(mask, static_cast<float>(lane), 0);
}

__global__ void write_past_shared(float* out) {
  auto* const tile = reinterpret_cast<float*>(resilin_emulation::dynamic_shared_memory());
  tile[threadIdx.x + 1] = 1.0f;  // one past the launch's dynamic shared memory for the last thread
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x];
}

extern "C" void aborted(int) { _exit(3); }

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGABRT, aborted);
  char const* c = argc > 1 ? argv[1] : "valid";
  float* out = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&out), 64 * sizeof(float)) != cudaSuccess) return 1;
  if (std::strcmp(c, "valid") == 0) {
    float sums[2] = {0, 0};
    RESILIN_LAUNCH(dim3(2), dim3(64), 0, nullptr, lane_sum)(out, 32, false, 0xffffffffu);
    cudaMemcpy(&sums[0], out + 1, sizeof(float), cudaMemcpyDeviceToHost);
    RESILIN_LAUNCH(dim3(1), dim3(32), 0, nullptr, lane_sum)(out, 16, true, 0x0000ffffu);
    cudaMemcpy(&sums[1], out, sizeof(float), cudaMemcpyDeviceToHost);
    bool const right = sums[0] == 496.0f && sums[1] == 120.0f;
    std::printf(right ? "ok\n" : "wrong sums %g %g\n", static_cast<double>(sums[0]), static_cast<double>(sums[1]));
    return right ? 0 : 1;
  }
  if (std::strcmp(c, "fill") == 0) {  // the bytes new device memory starts with
    unsigned char first = 0;
    cudaMemcpy(&first, out, 1, cudaMemcpyDeviceToHost);
    std::printf("fill 0x%02x\n", first);
    cudaFree(out);
    return 0;
  }
  if (std::strcmp(c, "returned_lane") == 0)  // lanes 16-31 return, the mask names them
    RESILIN_LAUNCH(dim3(1), dim3(32), 0, nullptr, lane_sum)(out, 16, true, 0xffffffffu);
  else if (std::strcmp(c, "partial_warp") == 0)  // a 16-thread block, a full-warp mask
    RESILIN_LAUNCH(dim3(1), dim3(16), 0, nullptr, lane_sum)(out, 16, false, 0xffffffffu);
  else if (std::strcmp(c, "syncwarp") == 0)
    RESILIN_LAUNCH(dim3(1), dim3(32), 0, nullptr, shuffle_against_syncwarp)(out);
  else if (std::strcmp(c, "masks") == 0)
    RESILIN_LAUNCH(dim3(1), dim3(32), 0, nullptr, different_masks)(out);
  else if (std::strcmp(c, "shared_overrun") == 0)
    RESILIN_LAUNCH(dim3(1), dim3(32), 32 * sizeof(float), nullptr, write_past_shared)(out);
  else {
    std::printf("unknown case %s\n", c);
    return 2;
  }
  cudaFree(out);  // the guards of device memory and of the shared buffer are checked by now
  std::printf("no report\n");
  return 0;
}
