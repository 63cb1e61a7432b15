#!/usr/bin/env bash
# One-command GPU check (issues 3-8): runs every CUDA test (alignment recursion with each cost
# model, FastCDTW, the lct codec, GPU barycentres), the host-emulated schedule test, the tool's
# `--backend cuda` against `--backend host`, and the CUDA benchmarks; writes
# bench/results/<date>-<gpu>.md (first line: the headline) and prints a short table last.
#   usage: scripts/gpu_check.sh --pack DIR   run the programs of a pack made by scripts/gpu_pack.sh
#                                            (built on a build machine: no build here)
#          scripts/gpu_check.sh [build-dir]  configure and build them here first (sm_90), for a
#                                            machine with Catch2 and Google Benchmark
# Budget: 8 minutes on a 16-core H200 machine (benchmark min_time is small and every step runs
# under `timeout` against what is left of the budget; a step that finds under 5 s left is not
# run and is reported so). Order: the tests, the headline benchmark, the tool's comparisons (90 s
# in all), the other benchmarks. The results file is rewritten after each stage, and with $OUT
# set (the device tool) copied there with the logs each time, so that a run stopped from outside
# still brings back what it measured.
#   env: RESILIN_CUDA_ARCH (default 90), RESILIN_JOBS (default nproc), RESILIN_BUDGET_S (480),
#        RESILIN_PREFIX_PATH (build mode: CMAKE_PREFIX_PATH for Catch2 and Google Benchmark)
# A skipped test (exit 77) counts as a failure on a GPU machine. Without a GPU it exits 2 after
# the schedule test.
# Catch2 tests print each case's duration (to size later runs); a failed test's first failed
# case runs once more under compute-sanitizer's memcheck (not after a timeout, at most twice,
# and only while 360 s of the budget are left for it and the benchmarks).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
pack=""
build="build-gpu"
if [ "${1:-}" = "--pack" ]; then
  pack="$(cd "${2:?--pack needs a folder}" && pwd)"
  build="$(mktemp -d /tmp/resilin-gpu-check.XXXX)"  # logs and tables only
elif [ -n "${1:-}" ]; then
  build="$1"
fi
arch="${RESILIN_CUDA_ARCH:-90}"
jobs="${RESILIN_JOBS:-$(nproc 2>/dev/null || echo 2)}"
budget="${RESILIN_BUDGET_S:-480}"
nvcc_bin="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
# seconds a step may take: its cap, or what is left of the budget (10 s kept for the report); 0
# once under 5 s are left (a floor of 5 s per step overran the budget by 26 steps x 5 s)
allow() {
  local left=$(( budget - $(elapsed) - 10 ))
  if [ "$left" -lt 5 ]; then echo 0; elif [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}
# run_capped CAP CMD...: CMD under timeout (KILL 10 s after TERM); exit 200, not run, once the
# budget is spent
run_capped() { local t; t="$(allow "$1")"; shift; [ "$t" -gt 0 ] || return 200; timeout -k 10 "$t" "$@"; }

# --- the programs: tests (name -> path), the schedule test, benchmarks, the tool -------------------
declare -A exe
tests="" benches="" cli="" build_s=0
origin=""
if [ -n "$pack" ]; then
  echo "== pack $pack"
  cat "$pack/MANIFEST"
  tests="$(sed -n 's/^tests //p' "$pack/MANIFEST")"
  benches="$(sed -n 's/^benches //p' "$pack/MANIFEST")"
  for t in $tests host_test_device_schedule $benches; do exe[$t]="$pack/bin/$t"; done
  [ -x "$pack/bin/resilin" ] && cli="$pack/bin/resilin"
  export LD_LIBRARY_PATH="$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  origin="pack of $(sed -n 's/^commit //p' "$pack/MANIFEST"), built $(sed -n 's/^date //p' "$pack/MANIFEST") ($(sed -n 's/^nvcc //p' "$pack/MANIFEST"))"
  pack_arch="$(sed -n 's/^nvcc .*sm_\([0-9]*\).*/\1/p' "$pack/MANIFEST")"  # what the pack was built for
  [ -z "$pack_arch" ] || arch="$pack_arch"
else
  echo "== configure ($build, sm_$arch)"
  mkdir -p "$build"
  prefix=()
  [ -n "${RESILIN_PREFIX_PATH:-}" ] && prefix=(-DCMAKE_PREFIX_PATH="$RESILIN_PREFIX_PATH")
  # CMake < 3.26 does not know nvcc's C++20 flag: supply it (harmless on newer CMake).
  cmake $(resilin_generator "$build") -S . -B "$build" "${prefix[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_COMPILER="$nvcc_bin" -DCMAKE_CUDA_ARCHITECTURES="$arch" -DRESILIN_BUILD_TESTS=ON \
    -DRESILIN_BUILD_BENCH=ON -DRESILIN_BUILD_EXAMPLES=OFF \
    -DCMAKE_CUDA20_STANDARD_COMPILE_OPTION=-std=c++20 \
    -DCMAKE_CUDA20_EXTENSION_COMPILE_OPTION=-std=c++20 >"$build/gpu_check.configure.log" 2>&1 \
    || { tail -30 "$build/gpu_check.configure.log"; echo "gpu_check: configure failed (Catch2 missing? use scripts/gpu_pack.sh and --pack)"; exit 1; }
  # CTest test names equal their target names.
  tests="$(ctest --test-dir "$build" -N -L cuda 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: *//p' | tr '\n' ' ')"
  [ -n "$tests" ] || { echo "gpu_check: no CUDA tests configured (nvcc not found?)"; exit 1; }
  known_targets="$(cmake --build "$build" --target help 2>/dev/null)"
  for b in bm_soft_dtw_cuda bm_fcdtw_cuda bm_lct_cuda; do
    if grep -qE "(^|[ .:])$b(:|$| )" <<<"$known_targets"; then benches="$benches $b"; fi
  done
  [ -n "$benches" ] || echo "gpu_check: Google Benchmark not found: no benchmarks (set RESILIN_PREFIX_PATH)"
  targets="$tests host_test_device_schedule$benches"
  echo "== build ($targets; -j$jobs)"
  build_start=$(date +%s)
  build_targets() {
    if [ -f "$build/build.ninja" ]; then cmake --build "$build" -j "$jobs" --target $targets; return; fi
    # Makefiles: the top-level Makefile is .NOTPARALLEL (it would build one target after another,
    # each a single nvcc job); CMakeFiles/Makefile2 builds the targets side by side.
    local goals="" t d
    for t in $targets; do
      d="$(sed -n "s|^$t: \(.*\)/rule\$|\1|p" "$build/CMakeFiles/Makefile2")"
      [ -n "$d" ] || { cmake --build "$build" -j "$jobs" --target $targets; return; }
      goals="$goals $d/all"
    done
    make -C "$build" -f CMakeFiles/Makefile2 -j "$jobs" $goals
  }
  build_targets >"$build/gpu_check.build.log" 2>&1 \
    || { grep -E "error|Error" "$build/gpu_check.build.log" | head -30; echo "gpu_check: build failed (log: $build/gpu_check.build.log)"; exit 1; }
  build_s=$(( $(date +%s) - build_start ))
  echo "build done in $build_s s (total $(elapsed) s)"
  for t in $targets; do exe[$t]="$(find "$build" -type f -name "$t" -perm -u+x | head -1)"; done
  origin="built here in $build_s s on $jobs jobs, commit $(git rev-parse --short HEAD 2>/dev/null || echo n/a) (working tree may differ)"
fi

run_schedule_test() {  # bounded: a hang must not keep the GPU results from being written
  run_capped 240 "${exe[host_test_device_schedule]}" >"$build/gpu_check.schedule.log" 2>&1
}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "== host-emulated kernel schedule (CPU)"
  run_schedule_test || { tail -30 "$build/gpu_check.schedule.log"; echo "gpu_check: schedule test failed"; exit 1; }
  tail -2 "$build/gpu_check.schedule.log"
  echo "gpu_check: no NVIDIA GPU here (nvidia-smi missing or lists no device): GPU tests and benchmarks NOT run."
  exit 2
fi
# With a GPU, the CPU-only schedule test (tens of seconds) runs beside the GPU tests and is
# waited for before the benchmarks.
run_schedule_test &
schedule_pid=$!
gpu_name="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
gpu_driver="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)"
gpu_addressing="$(nvidia-smi -q 2>/dev/null | sed -n 's/^ *Addressing Mode *: *//p' | head -1)"
echo "== $gpu_name, driver $gpu_driver, addressing mode ${gpu_addressing:-n/a}"
gpu_tag="$(echo "$gpu_name" | tr 'A-Z' 'a-z' | grep -o 'h200\|h100\|a100\|l40s\|rtx [0-9]*\|[a-z0-9]*$' | head -1 | tr ' ' '-')"
[ -n "$gpu_tag" ] || gpu_tag=gpu

# --- tests: each program in turn; exit 0 passes, 77 (no device) and anything else fail ------------
echo "== CUDA tests on $gpu_name"
tests_ok=1
test_lines=""
sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)"
[ -n "$sanitizer" ] || echo "gpu_check: no compute-sanitizer here: failed tests are not rerun under memcheck"
memcheck_runs=0
# The first failed test case of a Catch2 console log: the first line of the header that opens
# the failing case (Catch2 wraps names past 79 columns: completed by full_case_name).
first_failed_case() {
  awk '/^-+$/ && length($0) > 70 { if (!open) { open = 1; getline name; next } open = 0; next }
       /FAILED:$/ { print name; exit }' "$1"
}
# The full name of the program's test case that starts with $2 ("" when none does).
full_case_name() {
  "$1" --list-test-names-only 2>/dev/null | awk -v p="$2" 'index($0, p) == 1 { print; exit }'
}
# A Catch2 test spec naming exactly one case: its special characters escaped.
catch_spec() { sed 's/[][\\,*"]/\\&/g' <<<"$1"; }
# record_test LINE_PREFIX RC LOG: the verdict line of a test program (exit 0 passes, 200 was not
# run, anything else fails), its log's tail on failure
record_test() {
  local verdict
  if [ "$2" -eq 0 ]; then verdict=passed
  elif [ "$2" -eq 200 ]; then verdict="NOT RUN (budget spent)"; tests_ok=0
  else verdict="FAILED (exit $2)"; tests_ok=0; fi
  local line="$1: $verdict; $(grep -a -E "All tests passed|test cases:" "$3" | tail -1)"
  echo "$line"
  [ "$2" -eq 0 ] || [ "$2" -eq 200 ] || tail -25 "$3"
  test_lines="$test_lines$line"$'\n'
}
for t in $tests; do
  t0=$(date +%s)
  catch_args=()
  [[ "$t" == example_* ]] || catch_args=(--durations yes)  # the examples are not Catch2 programs
  run_capped 120 "${exe[$t]}" "${catch_args[@]}" >"$build/$t.log" 2>&1
  rc=$?
  record_test "$t ($(( $(date +%s) - t0 )) s)" "$rc" "$build/$t.log"
  # A failure seen for the first time on a GPU: its first failed case once more under
  # compute-sanitizer (memcheck), so that the one run says whether memory errors caused it.
  # Not for a timeout (the rerun would hang too) or a missing device (77), at most twice, and
  # only while the benchmarks' 300 s stay in the budget.
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ "$rc" -ne 200 ] &&
     [ -n "$sanitizer" ] &&
     [ "${#catch_args[@]}" -gt 0 ] && [ "$memcheck_runs" -lt 2 ] &&
     [ $(( budget - $(elapsed) - 10 )) -ge 360 ]; then
    failed_case="$(first_failed_case "$build/$t.log")"
    [ -z "$failed_case" ] || failed_case="$(full_case_name "${exe[$t]}" "$failed_case")"
    if [ -n "$failed_case" ]; then
      memcheck_runs=$(( memcheck_runs + 1 ))
      timeout -k 10 60 "$sanitizer" --tool memcheck --print-limit 20 "${exe[$t]}" \
        "$(catch_spec "$failed_case")" >"$build/$t.memcheck.log" 2>&1
      mrc=$?
      if grep -a -q 'No test cases matched' "$build/$t.memcheck.log"; then summary='no test case matched: nothing ran'
      else summary="$(grep -a -m1 'ERROR SUMMARY' "$build/$t.memcheck.log" || echo 'no summary (timed out?)')"; fi
      line="  memcheck of '$failed_case' (exit $mrc): $summary"
      echo "$line"
      grep -a -m6 -A3 '^========= Invalid\|^========= Program hit\|^========= Race' "$build/$t.memcheck.log"
      test_lines="$test_lines$line"$'\n'
    fi
  fi
done
wait "$schedule_pid"
record_test "host_test_device_schedule (CPU, beside the GPU tests)" "$?" "$build/gpu_check.schedule.log"

# run_bench NAME CAP: the benchmark's own table goes to $build/NAME.md, its log to .log. Exit
# codes: not-built, not-run (no budget left), cut (stopped by the budget before its own cap:
# its table may lack rows), timed-out (ran its whole cap: a hang, or far slower than sized), or
# the program's own
bench_rc=""
run_bench() {
  local name=$1 cap=$2 rc t
  rm -f "$build/$name.md"
  if [[ " $benches " != *" $name "* ]]; then bench_rc="$bench_rc $name=not-built"; return; fi
  t="$(allow "$cap")"
  if [ "$t" -eq 0 ]; then echo "== $name: not run (budget spent)"; bench_rc="$bench_rc $name=not-run"; return; fi
  echo "== $name (up to $t s)"
  timeout -k 10 "$t" "${exe[$name]}" --benchmark_min_time=0.05 --summary="$build/$name.md" \
    >"$build/$name.log" 2>&1
  rc=$?
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    if [ "$t" -lt "$cap" ]; then rc=cut; else rc=timed-out; fi
  fi
  grep -a "FAILED" "$build/$name.log" | head -5
  echo "$name exit code $rc"
  bench_rc="$bench_rc $name=$rc"
}

# the tool's --backend cuda against --backend host, 90 s in all (20 s a case)
run_cli_comparisons() {
  [ -n "$cli" ] || return 0
  echo "== the tool: --backend cuda against --backend host"
  local end=$(( $(elapsed) + 90 )) case_line c out rc verdict line cap
  while IFS= read -r case_line; do
    [[ "$case_line" =~ ^([a-z0-9_]+):\ (.*)$ ]] || continue  # the cases of the cli_backends_* tests
    c="${BASH_REMATCH[2]}"
    cap=$(( end - $(elapsed) ))
    [ "$cap" -le 20 ] || cap=20
    if [ "$cap" -lt 1 ]; then out="the comparisons' 90 s are spent"; rc=200
    else
      out="$(cd examples/cli/testdata && run_capped "$cap" ../check_cli_backends.sh "$cli" $c 2>&1 </dev/null)"
      rc=$?
      [ "$rc" -ne 200 ] || out="the budget is spent"
    fi
    if [ "$rc" -eq 0 ] && ! grep -q SKIPPED <<<"$out"; then verdict=passed
    elif [ "$rc" -eq 200 ]; then verdict="NOT RUN"; tests_ok=0
    else verdict="FAILED"; tests_ok=0; fi
    line="resilin ${c#*-- } --backend cuda vs host: $verdict; $(tail -1 <<<"$out")"
    echo "$line"
    test_lines="$test_lines$line"$'\n'
  done <examples/cli/backend_cases.txt
}

# the number in column COL of the row whose first cell is NAME in a benchmark table
cell() { awk -F'|' -v n="$2" -v c="$3" '{ k=$2; gsub(/^ +| +$/, "", k) } k==n { v=$c; gsub(/ /, "", v); print v; exit }' "$build/$1.md" 2>/dev/null; }
# "value unit (goal ..., PASS|MISS)" for value >= goal; a 4th argument (the benchmark's own
# check failed) makes it MISS whatever the value
versus() { if [ -z "$1" ]; then echo "(not measured) vs goal >= $2 $3"; else
  awk -v v="$1" -v g="$2" -v u="$3" -v bad="${4:-}" 'BEGIN { printf "%s %s (goal >= %s: %s)", v, u, g,
    (bad != "" ? "MISS, unverified" : (v + 0 >= g + 0 ? "PASS" : "MISS")) }'; fi; }

result="bench/results/$(date +%Y-%m-%d)-${gpu_tag}.md"
checks_ok=1
# write_report STAGE: (re)writes the results file from what has run so far, and copies it and
# the logs to $OUT
write_report() {
  local stage="$1"
  local sdtw_head sdtw_head_block head_mem head_mem_ratio head_mem_ratio_nograds dtw_h1 msm cdtw
  sdtw_head="$(cell bm_soft_dtw_cuda headline/fwd+bwd 4)"
  sdtw_head_block="$(cell bm_soft_dtw_cuda headline/block/fwd+bwd 4)"
  head_mem="$(cell bm_soft_dtw_cuda headline/fwd+bwd 5)"
  head_mem_ratio="$(cell bm_soft_dtw_cuda headline/fwd+bwd 6)"
  head_mem_ratio_nograds="$(cell bm_soft_dtw_cuda headline/fwd+bwd 7)"
  dtw_h1="$(cell bm_soft_dtw_cuda H1/8192x395x4437/dtw_fwd 4)"
  msm="$(cell bm_soft_dtw_cuda C1/soft_msm/32x1024x1/fwd+bwd 4)"
  cdtw="$(cell bm_soft_dtw_cuda C1/soft_cdtw/32x1024x1/fwd+bwd 4)"
  local h1_block h1_strip m3_block m3_strip w1_block w1_warp t1_block t1_tiled t1_block_train t1_tiled_train
  h1_block="$(cell bm_soft_dtw_cuda H1/512x395x4437/block/dtw_fwd 4)"
  h1_strip="$(cell bm_soft_dtw_cuda H1/512x395x4437/strip/dtw_fwd 4)"
  m3_block="$(cell bm_soft_dtw_cuda M3/block/fwd 4)"
  m3_strip="$(cell bm_soft_dtw_cuda M3/strip/fwd 4)"
  w1_block="$(cell bm_soft_dtw_cuda W1/8192x32x2/block/fwd 4)"
  w1_warp="$(cell bm_soft_dtw_cuda W1/8192x32x2/warp/fwd 4)"
  t1_block="$(cell bm_soft_dtw_cuda T1/2x8192x2/block/fwd 4)"
  t1_tiled="$(cell bm_soft_dtw_cuda T1/2x8192x2/tiled/fwd 4)"
  t1_block_train="$(cell bm_soft_dtw_cuda T1/2x8192x2/block/fwd+bwd 4)"
  t1_tiled_train="$(cell bm_soft_dtw_cuda T1/2x8192x2/tiled/fwd+bwd 4)"
  local cp1_whole cp1_cp cp1_tiled
  cp1_whole="$(cell bm_soft_dtw_cuda CP1/4x8192x16/whole/fwd+bwd 4) G cells/s, $(cell bm_soft_dtw_cuda CP1/4x8192x16/whole/fwd+bwd 5) MB"
  cp1_cp="$(cell bm_soft_dtw_cuda CP1/4x8192x16/checkpointed/fwd+bwd 4) G cells/s, $(cell bm_soft_dtw_cuda CP1/4x8192x16/checkpointed/fwd+bwd 5) MB"
  cp1_tiled="$(cell bm_soft_dtw_cuda CP1/4x8192x16/tiled-checkpointed/fwd+bwd 4) G cells/s, $(cell bm_soft_dtw_cuda CP1/4x8192x16/tiled-checkpointed/fwd+bwd 5) MB"
  local fc_thread fc_block fc_fit fc_fit_long_block fc_fit_long_thread fc_bary_host fc_bary_gpu fc1_fwd fc1_train
  fc_thread="$(cell bm_fcdtw_cuda fcdtw/P100000x128/thread_per_pair/value+grad 5)"
  fc_block="$(cell bm_fcdtw_cuda fcdtw/P16x4096/block_per_pair/value+grad 5)"
  fc_fit="$(cell bm_fcdtw_cuda fcdtw/P32768x128/fit300/thread_per_pair 4)"
  fc_fit_long_block="$(cell bm_fcdtw_cuda fcdtw/P16x4096/fit300/block_per_pair 3)"
  fc_fit_long_thread="$(cell bm_fcdtw_cuda fcdtw/P16x4096/fit300/thread_per_pair 3)"
  fc_bary_host="$(cell bm_fcdtw_cuda fcdtw/barycenter/N256x128/rounds3/host 3)"
  fc_bary_gpu="$(cell bm_fcdtw_cuda fcdtw/barycenter/N256x128/rounds3/gpu 3)"
  fc1_fwd="$(cell bm_soft_dtw_cuda FC1/32768x128x1/fwd 4)"
  fc1_train="$(cell bm_soft_dtw_cuda FC1/32768x128x1/fwd+bwd 4)"
  local lct_dec lct_enc lct_check fc_check
  lct_dec="$(cell bm_lct_cuda bf16/256Mi/decode 4)"
  lct_enc="$(cell bm_lct_cuda bf16/256Mi/encode 4)"
  # correctness the benchmarks check before timing (lct: device bytes == host bytes, round trip)
  lct_check="$(grep -q FAILED "$build/bm_lct_cuda.md" 2>/dev/null && echo "; verification FAILED" || true)"
  fc_check="$(grep -q FAILED "$build/bm_fcdtw_cuda.md" 2>/dev/null && echo "; host check FAILED" || true)"
  # a benchmark's own check that failed, or a benchmark that crashed (not a timeout: 124)
  checks_ok=1
  [ -z "$lct_check$fc_check" ] || checks_ok=0
  local b_rc
  for b_rc in $bench_rc; do
    case "${b_rc#*=}" in 0|cut|not-built|not-run) ;; *) checks_ok=0 ;; esac
  done

  mkdir -p bench/results
  {
    if [ -s "$build/bm_soft_dtw_cuda.md" ] && head -1 "$build/bm_soft_dtw_cuda.md" | grep -q '^headline:'; then
      head -1 "$build/bm_soft_dtw_cuda.md"
    else
      local why="benchmark did not run"
      case "$bench_rc" in *bm_soft_dtw_cuda=timed-out*|*bm_soft_dtw_cuda=cut*) why="benchmark stopped by its time cap" ;; esac
      echo "headline: soft-dtw fwd+bwd B=32 n=m=1024 d=64 float: ($why) G cells/s, peak memory (n/a) MB"
    fi
    echo
    if [ "$tests_ok" -eq 1 ] && [ "$checks_ok" -eq 1 ]; then echo "all GPU tests passed"
    elif [ "$tests_ok" -eq 1 ]; then echo "GPU tests passed, but a benchmark's own check FAILED, or a benchmark crashed or hung (see the goals and the exit codes)"
    else echo "GPU tests FAILED or were not run (see the test lines below)"; fi
    echo
    echo "report: $stage (after $(elapsed) s of a $budget s budget)"
    echo
    echo "machine: $gpu_name, driver $gpu_driver, addressing ${gpu_addressing:-n/a}; $origin; sm_$arch; benchmark exit codes:${bench_rc:- none run yet}"
    echo
    echo "## Goals"
    echo
    echo "| capability | measured |"
    echo "|---|---|"
    echo "| soft-DTW fwd+bwd B=32 n=m=1024 d=64 float | $(versus "$sdtw_head" 50 "G cells/s") |"
    echo "| the same, one CTA per pair (no tiles) | ${sdtw_head_block:-?} G cells/s |"
    echo "| its training peak memory / (inputs + one value per cell), gradient outputs aside | ${head_mem_ratio_nograds:-?} (goal <= 1.1); with them ${head_mem_ratio:-?}; peak ${head_mem:-?} MB |"
    echo "| hard DTW fwd univariate (H1, 8192 x 395 x 4437) | $(versus "$dtw_h1" 1000 "G cells/s") |"
    echo "| lct bf16 decode (256 Mi N(0,0.02)) | $(versus "$lct_dec" 1000 "GB/s" "$lct_check")$lct_check |"
    echo "| lct bf16 encode (256 Mi N(0,0.02)) | $(versus "$lct_enc" 500 "GB/s" "$lct_check")$lct_check |"
    echo "| soft-MSM fwd+bwd B=32 n=m=1024 d=1 | ${msm:-(not measured)} G cells/s |"
    echo "| soft-CDTW (grid) fwd+bwd B=32 n=m=1024 d=1 | ${cdtw:-(not measured)} G cells/s |"
    echo "| schedules, soft-DTW fwd 8192 x 32 x 2: block / warp per pair | ${w1_block:-?} / ${w1_warp:-?} G cells/s |"
    echo "| schedules, hard DTW fwd 512 x 395 x 4437: block per pair / strip warp | ${h1_block:-?} / ${h1_strip:-?} G cells/s |"
    echo "| schedules, soft-DTW fwd 512 x 256 x 256 x 2 (M3): block per pair / strip warp | ${m3_block:-?} / ${m3_strip:-?} G cells/s |"
    echo "| schedules, soft-DTW fwd 2 x 8192 x 2: block per pair / tiled | ${t1_block:-?} / ${t1_tiled:-?} G cells/s |"
    echo "| schedules, soft-DTW fwd+bwd 2 x 8192 x 2: block per pair / tiled | ${t1_block_train:-?} / ${t1_tiled_train:-?} G cells/s |"
    echo "| training 4 x 8192 x 16: whole grid / checkpointed / tiled checkpointed | $cp1_whole / $cp1_cp / $cp1_tiled |"
    echo "| FastCDTW value+grad 1e5 pairs n=128 (thread/pair) | ${fc_thread:-(not measured)} G pieces/s$fc_check |"
    echo "| FastCDTW value+grad 16 pairs n=4096 (block/pair) | ${fc_block:-(not measured)} G pieces/s$fc_check |"
    echo "| FastCDTW 300-step fit 32768 pairs n=128 (thread/pair) | ${fc_fit:-(not measured)} M pairs/s$fc_check |"
    echo "| FastCDTW 300-step fit 16 pairs n=4096: block / thread per pair | ${fc_fit_long_block:-?} / ${fc_fit_long_thread:-?} ms$fc_check |"
    echo "| FastCDTW barycentre 256 series n=128, 3 rounds: host cores / GPU warp fits | ${fc_bary_host:-?} / ${fc_bary_gpu:-?} ms$fc_check |"
    echo "| soft-DTW at the fit's shape (32768 pairs, n=m=128, d=1; 16384 cells a pair): fwd, fwd+bwd | ${fc1_fwd:-?}, ${fc1_train:-?} G cells/s |"
    local b
    for b in bm_soft_dtw_cuda bm_fcdtw_cuda bm_lct_cuda; do
      [ -s "$build/$b.md" ] || continue
      echo
      echo "## $b"
      echo
      if [ "$b" = bm_soft_dtw_cuda ]; then tail -n +2 "$build/$b.md"; else cat "$build/$b.md"; fi
    done
    echo
    echo "## Tests"
    echo
    echo '```'
    printf '%s' "$test_lines"
    echo '```'
  } >"$result"
  if [ -n "${OUT:-}" ] && [ -d "$OUT" ]; then  # the device tool brings $OUT back (8 files at most)
    cp "$result" "$OUT/"
    tar -czf "$OUT/gpu_check_logs.tar.gz" -C "$build" $(cd "$build" && ls *.log *.md 2>/dev/null) 2>/dev/null
  fi
}
# stopped from outside (TERM once the child in progress ends): what ran so far
trap 'write_report "stopped from outside"; exit 143' TERM

write_report "after the tests"
run_bench bm_soft_dtw_cuda 150
write_report "after the tests and the soft-DTW benchmark"
run_cli_comparisons
write_report "after the tests, the soft-DTW benchmark and the tool's comparisons"
run_bench bm_fcdtw_cuda 60
write_report "after the tests, the soft-DTW and FastCDTW benchmarks and the tool's comparisons"
run_bench bm_lct_cuda 90
write_report "complete"

echo
echo "== summary (written to $result, total $(elapsed) s)"
head -3 "$result"
sed -n '/^## Goals/,/^## bm_/p' "$result" | grep '^|'
printf '%s' "$test_lines" | sed 's/;.*//'
[ "$tests_ok" -eq 1 ] && [ "$checks_ok" -eq 1 ] || exit 1
exit 0
