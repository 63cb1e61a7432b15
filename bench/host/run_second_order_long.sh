#!/usr/bin/env bash
# Runs bm_second_order_long_host one benchmark per process, so that each row's peak_RSS_MB is
# its own: bench/host/run_second_order_long.sh BUILD_DIR [n ...] (default n: 2048 4096 8192 16384).
set -euo pipefail
build=${1:?usage: run_second_order_long.sh BUILD_DIR [n ...]}
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2048 4096 8192 16384)
bin="$build/bench/host/bm_second_order_long_host"
[ -x "$bin" ] || { echo "no $bin: build the target bm_second_order_long_host first" >&2; exit 1; }
for name in BM_expected_penalty_long BM_sharp_value_and_grad_long; do
  for n in "${sizes[@]}"; do
    "$bin" --benchmark_filter="^$name/n:$n/" --benchmark_report_aggregates_only=false
  done
done
