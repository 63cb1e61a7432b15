// Entry point of every GPU test executable: exit code 77 (CTest: skipped) when no CUDA device
// can be used, so a machine without a GPU still builds and reports these tests honestly.
#include <cstdio>
#include <cuda_runtime_api.h>
#if __has_include(<catch2/catch_all.hpp>)
#  include <catch2/catch_session.hpp>
#else
#  define CATCH_CONFIG_RUNNER
#  include <catch2/catch.hpp>
#endif

int main(int argc, char* argv[]) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("no CUDA device: GPU tests skipped");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
