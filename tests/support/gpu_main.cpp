// Entry point of every GPU test executable: exit code 77 (CTest: skipped) when no CUDA device
// can be used, so a machine without a GPU still builds and reports these tests honestly.
#include <cstdio>
#include <string>
#include <resilin/backend/cuda/device_status.hpp>
#if __has_include(<catch2/catch_all.hpp>)
#  include <catch2/catch_session.hpp>
#else
#  define CATCH_CONFIG_RUNNER
#  include <catch2/catch.hpp>
#endif

int main(int argc, char* argv[]) {
  std::string const why = resilin::cuda_unavailable_reason();
  if (!why.empty()) {
    std::printf("no CUDA device (%s): GPU tests skipped\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
