#!/usr/bin/env bash
# The main job: builds the resilin tool and classifies a built-in Cylinder-Bell-Funnel data
# set (Saito's formulas, fixed seed) with 1-NN DTW and 1-NN soft-DTW. Usage: scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
build="${RESILIN_BUILD_DIR:-build-demo}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRESILIN_BUILD_TESTS=OFF \
      -DRESILIN_BUILD_BENCH=OFF -DRESILIN_ENABLE_CUDA=OFF >/dev/null
cmake --build "$build" -j "$RESILIN_JOBS" --target resilin_cli >/dev/null
tool="$build/examples/cli/resilin"
echo "== 1-NN DTW on synthetic Cylinder-Bell-Funnel"
"$tool" classify --method 1nn --metric dtw --synthetic-cbf
echo "== 1-NN soft-DTW (gamma = 1) on the same data"
"$tool" classify --method 1nn --metric soft-dtw --gamma 1 --synthetic-cbf
