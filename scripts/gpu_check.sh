#!/usr/bin/env bash
# One-command GPU check of the CUDA backend (issue 3): configures a build for sm_90, builds the
# CUDA tests, the host-emulated schedule test and the CUDA benchmarks, runs the CUDA tests
# (ctest -L cuda) and the benchmarks, writes bench/results/<date>-<gpu>.md and prints a short
# table last. Budget: under 8 minutes on an H200 (benchmark min_time is kept small).
#   usage: scripts/gpu_check.sh [build-dir]      (env: RESILIN_CUDA_ARCH, default 90)
# Without a GPU it still builds everything (a compile check), then exits 2 with a message.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
source scripts/env.sh
build="${1:-build-gpu}"
arch="${RESILIN_CUDA_ARCH:-90}"
jobs="${RESILIN_JOBS:-$(nproc 2>/dev/null || echo 2)}"
nvcc_bin="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
start=$(date +%s)

echo "== configure ($build, sm_$arch)"
# CMake < 3.26 does not know nvcc's C++20 flag: supply it (harmless on newer CMake).
mkdir -p "$build"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc_bin" \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" -DRESILIN_BUILD_BENCH=ON -DRESILIN_BUILD_EXAMPLES=OFF \
  -DCMAKE_CUDA20_STANDARD_COMPILE_OPTION=-std=c++20 \
  -DCMAKE_CUDA20_EXTENSION_COMPILE_OPTION=-std=c++20 >"$build/gpu_check.configure.log" 2>&1 \
  || { tail -30 "$build/gpu_check.configure.log"; echo "gpu_check: configure failed"; exit 1; }

echo "== build (CUDA tests, schedule test, benchmarks; -j$jobs)"
targets="cuda_test_cell_kernel cuda_test_wavefront host_test_device_schedule"
have_bench=0
if grep -q "bm_soft_dtw_cuda" "$build/Makefile" "$build"/bench/cuda/Makefile 2>/dev/null; then
  targets="$targets bm_soft_dtw_cuda"; have_bench=1
fi
cmake --build "$build" -j "$jobs" --target $targets || { echo "gpu_check: build failed"; exit 1; }
echo "build done in $(( $(date +%s) - start )) s"

echo "== host-emulated kernel schedule (CPU)"
"$build/tests/host/host_test_device_schedule" || { echo "gpu_check: schedule test failed"; exit 1; }

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu_check: no NVIDIA GPU here (nvidia-smi missing or lists no device)."
  echo "gpu_check: everything built; GPU tests and benchmarks NOT run."
  exit 2
fi
gpu_name="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
gpu_tag="$(echo "$gpu_name" | tr 'A-Z' 'a-z' | grep -o 'h200\|h100\|a100\|l40s\|rtx [0-9]*\|[a-z0-9]*$' | head -1 | tr ' ' '-')"
[ -n "$gpu_tag" ] || gpu_tag=gpu

echo "== CUDA tests on $gpu_name"
tests_ok=0
timeout 240 ctest --test-dir "$build" -L cuda --output-on-failure 2>&1 | tee "$build/gpu_check.ctest.log"
ctest_rc=${PIPESTATUS[0]}
# a skipped test (77) is not a pass on a GPU machine
if [ "$ctest_rc" -eq 0 ] && ! grep -qi "not run\|skipped" "$build/gpu_check.ctest.log"; then tests_ok=1; fi

summary="$build/bench-summary.md"
rm -f "$summary"
if [ "$have_bench" -eq 1 ]; then
  echo "== benchmarks"
  timeout 240 "$build/bench/cuda/bm_soft_dtw_cuda" --benchmark_min_time=0.05 --summary="$summary" \
    >"$build/gpu_check.bench.log" 2>&1
  echo "benchmark exit code $?"
else
  echo "gpu_check: Google Benchmark or bench/cuda not configured; no benchmarks"
fi

mkdir -p bench/results
result="bench/results/$(date +%Y-%m-%d)-${gpu_tag}.md"
{
  if [ -s "$summary" ]; then head -1 "$summary"; else
    echo "headline: soft-dtw fwd+bwd B=32 n=m=1024 d=64 float: (benchmark did not run) G cells/s, peak memory (n/a) MB"
  fi
  echo
  if [ "$tests_ok" -eq 1 ]; then echo "all GPU tests passed"; else echo "GPU tests FAILED or were skipped (see ctest output)"; fi
  echo
  echo "machine: $gpu_name; nvcc $("$nvcc_bin" --version | grep -o 'release [0-9.]*'); commit $(git rev-parse --short HEAD 2>/dev/null || echo n/a) (working tree may differ)"
  echo
  if [ -s "$summary" ]; then tail -n +2 "$summary"; fi
  echo
  echo '```'
  grep -E "tests passed|tests failed|Test +#" "$build/gpu_check.ctest.log" || true
  echo '```'
} >"$result"

echo
echo "== summary (written to $result, total $(( $(date +%s) - start )) s)"
head -3 "$result"
[ -s "$summary" ] && grep -E "^\| (config|headline|M[123]/|B1/32x1024x64|F1/16x4096|L1|S1|H1)" "$summary"
[ "$tests_ok" -eq 1 ] || exit 1
