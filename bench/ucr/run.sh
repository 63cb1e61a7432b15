#!/usr/bin/env bash
# Nearest-centroid soft-DTW / soft-MSM, 1-NN DTW and k-means on the UCR sets of ../shared/ucr,
# beside the published 1-NN numbers; gamma and c by leave-one-out on TRAIN only.
#   bench/ucr/run.sh [DATASET...]     # writes bench/results/<date>-ucr-eval.md
# Environment: UCR (../shared/ucr), BUILD (build-eval), THREADS (0 = all cores).
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/deps.sh
source scripts/env.sh
UCR=${UCR:-$(cd .. && pwd)/shared/ucr}
BUILD=${BUILD:-build-eval}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DRESILIN_BUILD_TESTS=OFF \
      -DRESILIN_BUILD_EXAMPLES=OFF -DRESILIN_ENABLE_CUDA=OFF >/dev/null
cmake --build "$BUILD" -j "$RESILIN_JOBS" --target eval_ucr >/dev/null
out="bench/results/$(date +%F)-ucr-eval.md"
{
  echo "# UCR evaluation: nearest centroid, 1-NN DTW, k-means ($(date +%F))"
  echo
  echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) threads;"
  echo "compiler: $(c++ --version | head -1); flags: -O3 -march=native (Release)."
  echo "Command: bench/ucr/run.sh $*  (eval_ucr, threads ${THREADS:-0} = all)."
  echo
  echo "1-NN DTW: full window, squared point cost, ties to the first training series; the"
  echo "published column is 1 - the UCR 2018 DTW-full error (Chinatown: the raw files as shipped)."
  echo "NC = nearest centroid: one barycentre per class by L-BFGS on the summed loss (30"
  echo "iterations, Euclidean-mean start). gamma in {0.01, 0.1, 1, 10} for soft-DTW and"
  echo "gamma x c in {0.1, 1} x {0.1, 1} for soft-MSM, chosen by leave-one-out accuracy on TRAIN"
  echo "(LOO column; barycentres refitted without the held-out series, 10 iterations). k-means:"
  echo "k = number of classes on TEST, soft-DTW with the chosen gamma, 2 restarts, 10 rounds,"
  echo "10 L-BFGS iterations per update; ARI against the TEST labels."
  echo
  "$BUILD/bench/ucr/eval_ucr" "$UCR" --threads "${THREADS:-0}" "$@"
} | tee "$out"
echo "wrote $out" >&2
