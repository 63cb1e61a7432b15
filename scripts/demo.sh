#!/usr/bin/env bash
# The main job: builds the resilin tool and runs `resilin demo` on built-in data (synthetic
# Cylinder-Bell-Funnel, Saito's formulas, fixed seed): soft-DTW and soft-MSM barycentres,
# nearest-centroid and 1-NN DTW accuracy, lct on a bf16 tensor; a results table on stdout and
# SVG plots in demo-out/. Usage: scripts/demo.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
build="${RESILIN_BUILD_DIR:-build-demo}"
out="${1:-demo-out}"
cmake $(resilin_generator "$build") -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRESILIN_BUILD_TESTS=OFF \
      -DRESILIN_BUILD_BENCH=OFF -DRESILIN_ENABLE_CUDA=OFF >/dev/null
cmake --build "$build" -j "$RESILIN_JOBS" --target resilin_cli >/dev/null
"$build/examples/cli/resilin" demo --out "$out"
