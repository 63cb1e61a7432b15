#!/usr/bin/env bash
# Runs bm_second_order_long_host one benchmark per process, so that each row's peak_RSS_MB is
# its own: bench/host/run_second_order_long.sh BUILD_DIR [shape ...], a shape n:N/m:M (default:
# n = m = 2048 4096 8192 16384, then 256 x 262144 and 262144 x 256).
set -euo pipefail
build=${1:?usage: run_second_order_long.sh BUILD_DIR [shape ...]}
shift
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(n:2048/m:2048 n:4096/m:4096 n:8192/m:8192 n:16384/m:16384
                                   n:256/m:262144 n:262144/m:256)
bin="$build/bench/host/bm_second_order_long_host"
[ -x "$bin" ] || { echo "no $bin: build the target bm_second_order_long_host first" >&2; exit 1; }
for name in BM_expected_penalty_long BM_sharp_value_and_grad_long; do
  for shape in "${shapes[@]}"; do
    "$bin" --benchmark_filter="^$name/$shape/" --benchmark_report_aggregates_only=false
  done
done
