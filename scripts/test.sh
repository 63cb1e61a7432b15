#!/usr/bin/env bash
# Builds resilin with its tests and examples (CUDA tests too when nvcc exists; they report
# skipped without a GPU) and runs every test. Usage: scripts/test.sh [build-dir]
# Set RESILIN_UCR_DIR to the UCR datasets folder to run the published-number tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
source scripts/env.sh
build="${1:-build}"
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${RESILIN_CMAKE_ARGS:-}
cmake --build "$build" -j "$RESILIN_JOBS"
# every public header compiles on its own (VERIFY_INTERFACE_HEADER_SETS)
cmake --build "$build" -j "$RESILIN_JOBS" --target resilin_verify_interface_header_sets \
      resilin_lct_verify_interface_header_sets $(cmake --build "$build" --target help | grep -o "resilin_learn_verify_interface_header_sets" | head -1)
ctest --test-dir "$build" --output-on-failure -j "$RESILIN_JOBS"
