#!/usr/bin/env bash
# Builds, on this (GPU-less) machine, every program the GPU check runs, for sm_90, and packs
# them for the lent GPU machine, whose bare image lacks Catch2, Google Benchmark, CLI11, Eigen,
# LBFGS++ and xxHash: the GPU's minutes then go to running, not to building. Carry the pack
# (the device tool's `carry`) and run `scripts/gpu_check.sh --pack build-gpu-pack` there.
#   usage: scripts/gpu_pack.sh [pack-dir]      (default build-gpu-pack; build folder build-gpu)
#   env: RESILIN_CUDA_ARCH (default 90), RESILIN_JOBS (default nproc), RESILIN_CUDA_FLAGS (extra
#        nvcc flags, e.g. -fmad=false to tell FMA contraction apart from a race when schedules
#        that should give the same bits differ on a GPU; named in the MANIFEST)
# The pack: bin/ (the CUDA tests, the host-emulated schedule test, the CUDA benchmarks and the
# `resilin` tool built with CUDA), lib/ (the shared libraries they need that a CUDA image may
# lack), MANIFEST (commit, date, compiler, the tests and benchmarks by name). Host code is built
# for x86-64-v3 (AVX2, FMA), not -march=native: the GPU machine's CPU is another one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
pack="${1:-build-gpu-pack}"
build="build-gpu"
arch="${RESILIN_CUDA_ARCH:-90}"
command -v nvcc >/dev/null || { echo "gpu_pack: nvcc not found (CUDA toolkit in /usr/local/cuda?)"; exit 1; }

echo "== configure $build (sm_$arch, host code x86-64-v3)"
mkdir -p "$build"
# CMake < 3.26 does not know nvcc's C++20 flag: supply it (harmless on newer CMake).
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DRESILIN_BUILD_TESTS=ON -DRESILIN_BUILD_BENCH=ON -DRESILIN_BUILD_EXAMPLES=ON \
  -DRESILIN_NATIVE_ARCH=OFF -DCMAKE_CXX_FLAGS="-march=x86-64-v3" \
  -DCMAKE_CUDA20_STANDARD_COMPILE_OPTION=-std=c++20 \
  -DCMAKE_CUDA20_EXTENSION_COMPILE_OPTION=-std=c++20 -DCMAKE_CUDA_FLAGS="${RESILIN_CUDA_FLAGS:-}" \
  >"$build/gpu_pack.configure.log" 2>&1 \
  || { tail -30 "$build/gpu_pack.configure.log"; exit 1; }
# CTest test names equal their target names.
tests="$(ctest --test-dir "$build" -N -L cuda | sed -n 's/^ *Test *#[0-9]*: *//p' | tr '\n' ' ')"
[ -n "$tests" ] || { echo "gpu_pack: no CUDA tests configured"; exit 1; }
benches="bm_soft_dtw_cuda bm_fcdtw_cuda bm_lct_cuda"
echo "== build: $tests host_test_device_schedule $benches resilin_cli"
cmake --build "$build" -j "$RESILIN_JOBS" --target $tests host_test_device_schedule $benches resilin_cli

rm -rf "$pack"
mkdir -p "$pack/bin" "$pack/lib"
for t in $tests host_test_device_schedule $benches resilin_cli; do
  [ "$t" = resilin_cli ] && name=resilin || name="$t"
  exe="$(find "$build" -type f -name "$name" -perm -u+x | head -1)"
  [ -n "$exe" ] || { echo "gpu_pack: $name not built"; exit 1; }
  cp "$exe" "$pack/bin/$name"
  strip --strip-unneeded "$pack/bin/$name"
done
# shared libraries outside the C and C++ runtimes (libbenchmark for the benchmarks)
for exe in "$pack"/bin/*; do
  ldd "$exe" | awk '/=> \// { print $3 }'
done | sort -u | { grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libpthread|libdl|librt)\.so' || true; } \
  | while read -r lib; do cp -L "$lib" "$pack/lib/"; done
{
  # untracked sources count too (the build globs new tests in), and the build's own files
  dirty="$(git status --porcelain -- include tests bench examples cmake CMakeLists.txt scripts)"
  echo "commit $(git rev-parse --short HEAD)${dirty:+ (with uncommitted changes)}"
  echo "date $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "nvcc $(nvcc --version | grep -o 'release [0-9.]*'), $(g++ --version | head -1), sm_$arch, host x86-64-v3${RESILIN_CUDA_FLAGS:+, nvcc flags $RESILIN_CUDA_FLAGS}"
  echo "tests $tests"
  echo "schedule_test host_test_device_schedule"
  echo "benches $benches"
  echo "cli resilin"
} >"$pack/MANIFEST"
du -sh "$pack"
cat "$pack/MANIFEST"
