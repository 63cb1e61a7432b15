#!/usr/bin/env bash
# Builds resilin with its tests and examples (CUDA tests too when nvcc exists; they report
# skipped without a GPU) and runs every test. Usage: scripts/test.sh [build-dir]
# Set RESILIN_UCR_DIR to the UCR datasets folder to run the published-number tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
build="${1:-build}"
cmake $(resilin_generator "$build") -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${RESILIN_CMAKE_ARGS:-}
cmake --build "$build" -j "$RESILIN_JOBS"
# every public header compiles on its own (VERIFY_INTERFACE_HEADER_SETS)
# (CMake's aggregate of the header-set targets: resilin, resilin_lct and, with Eigen, resilin_learn)
cmake --build "$build" -j "$RESILIN_JOBS" --target all_verify_interface_header_sets
ctest --test-dir "$build" --output-on-failure -j "$RESILIN_JOBS"
