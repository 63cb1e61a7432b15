#!/usr/bin/env bash
# resilin against its Python peers (tslearn, aeon, Blondel's soft-dtw, dtaidistance), one thread,
# float64. Reproduces bench/results/2026-11-30-peers-*.md. Nothing here is part of the project's
# build or tests: the venv and build folders live outside the repository.
#
#   bench/peers/run.sh            # ~10-15 min on 2 loaded cores; results in $OUT (tables.md)
#
# Environment: VENV (/tmp/peers-venv), BUILD (/tmp/peerb), OUT (/tmp/peers-out),
# UCR (/work/shared/ucr), REPEATS (3: best of), SKIP_INSTALL=1 to reuse the venv as it is.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
VENV=${VENV:-/tmp/peers-venv}
BUILD=${BUILD:-/tmp/peerb}
OUT=${OUT:-/tmp/peers-out}
UCR=${UCR:-/work/shared/ucr}
REPEATS=${REPEATS:-3}
mkdir -p "$OUT"
uptime > "$OUT/load-start.txt"
export NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

echo "== 1. the venv ($VENV)"
if [[ ${SKIP_INSTALL:-0} != 1 ]]; then
  [[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q numpy tslearn aeon
  "$VENV/bin/pip" install -q dtaidistance || echo "dtaidistance: did not install, skipped"
  # soft-dtw 0.1.6 is an sdist whose setup.py imports Cython and needs bdist_wheel: build it
  # without isolation once both are in the venv.
  "$VENV/bin/pip" install -q soft-dtw 2>/dev/null ||
    { "$VENV/bin/pip" install -q cython wheel &&
      "$VENV/bin/pip" install -q --no-build-isolation soft-dtw; } ||
    echo "soft-dtw: did not install, skipped"
fi
"$VENV/bin/pip" freeze > "$OUT/pip-freeze.txt"

echo "== 2. the resilin side ($BUILD)"
cmake -S "$REPO" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DRESILIN_ENABLE_CUDA=OFF \
      -DRESILIN_BUILD_TESTS=OFF -DRESILIN_BUILD_EXAMPLES=ON > "$OUT/cmake-configure.log"
targets=(bm_soft_dtw_host)
if cmake --build "$BUILD" --target help | grep -q '\bresilin_cli\b'; then targets+=(resilin_cli); fi
cmake --build "$BUILD" -j2 --target "${targets[@]}"
# resilin's value and gradient of the first pair of each shape, for peers.py to print beside theirs
g++ -std=c++20 -O3 -march=native -I"$REPO/include" "$REPO/bench/peers/value_check.cpp" -pthread \
    -o "$BUILD/value_check"
{ c++ --version | head -1; grep -h 'CXX_FLAGS' "$BUILD/bench/host/CMakeFiles/bm_soft_dtw_host.dir/flags.make";
  [[ -f $BUILD/examples/cli/CMakeFiles/resilin_cli.dir/flags.make ]] &&
    grep -h 'CXX_FLAGS' "$BUILD/examples/cli/CMakeFiles/resilin_cli.dir/flags.make"; } > "$OUT/compiler.txt" || true

echo "== 3. resilin soft-DTW, threads:1 (Google Benchmark, best of $REPEATS repetitions)"
"$BUILD/bench/host/bm_soft_dtw_host" --benchmark_filter='threads:1' \
    --benchmark_repetitions="$REPEATS" --benchmark_out="$OUT/resilin_bm.json" \
    --benchmark_out_format=json | tee "$OUT/resilin_bm.txt"

cli_args=(classify --method 1nn --metric dtw --threads 1
          "$UCR/GunPoint/GunPoint_TRAIN.tsv" "$UCR/GunPoint/GunPoint_TEST.tsv")
cli_opts=()
if [[ -x $BUILD/examples/cli/resilin ]]; then
  echo "== 4. resilin classify GunPoint, 1 thread"
  : > "$OUT/cli_seconds.txt"
  for _ in 1 2 3 4 5; do  # its own `seconds` (pairwise matrix + argmin), error rate, errors
    "$BUILD/examples/cli/resilin" "${cli_args[@]}" |
      awk -F'\t' 'NR == 2 { s = $10; e = $9 } $1 == "error_rate" { r = $2 } END { print s, r, e }' \
      >> "$OUT/cli_seconds.txt"
  done
  cat "$OUT/cli_seconds.txt"
  cli_opts+=(--cli-seconds "$OUT/cli_seconds.txt")
  if command -v hyperfine > /dev/null; then
    hyperfine --warmup 1 --runs 10 --export-json "$OUT/cli_hyperfine.json" \
      "$BUILD/examples/cli/resilin ${cli_args[*]}"
    cli_opts+=(--cli-hyperfine "$OUT/cli_hyperfine.json")
  else
    /usr/bin/time -v "$BUILD/examples/cli/resilin" "${cli_args[@]}" 2> "$OUT/cli_time.txt" | tail -2
    grep -E 'Elapsed|User time|System time' "$OUT/cli_time.txt"
  fi
else
  echo "== 4. no resilin CLI in this checkout (examples/cli): skipped"
fi

echo "== 5. the peers (one thread, best of $REPEATS)"
"$VENV/bin/python" "$REPO/bench/peers/peers.py" --repeats "$REPEATS" --ucr "$UCR" \
    --resilin-check "$BUILD/value_check" --json "$OUT/peers.json" 2>&1 |
  grep -v 'Cannot import Matplotlib' | tee "$OUT/peers.txt"

echo "== 6. tables -> $OUT/tables.md"
python3 "$REPO/bench/peers/summarize.py" --peers "$OUT/peers.json" --resilin "$OUT/resilin_bm.json" \
    "${cli_opts[@]}" | tee "$OUT/tables.md"
{ echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"; lscpu | grep -E 'Model name|^CPU\(s\)'; uptime; } > "$OUT/machine.txt"
cat "$OUT/machine.txt"
