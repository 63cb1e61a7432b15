#!/bin/sh
# Builds the lct container fuzzer with clang (libFuzzer + ASan + UBSan) and runs it.
# usage: tests/lct/fuzz/run_fuzz.sh BUILD_DIR SECONDS
# Exits 0 (after saying so) when clang++ is not available.
set -eu
build=${1:?usage: run_fuzz.sh BUILD_DIR SECONDS}
seconds=${2:?usage: run_fuzz.sh BUILD_DIR SECONDS}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cxx=""
for c in "${CXX_FUZZ:-}" clang++-14 clang++; do
  if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [ -z "$cxx" ]; then
  echo "run_fuzz.sh: clang++ not found: lct fuzzer skipped"
  exit 0
fi
mkdir -p "$build/corpus"
flags="-std=c++20 -O1 -g -I$root/include"
"$cxx" $flags "$here/make_seeds.cpp" -o "$build/make_seeds"
"$build/make_seeds" "$build/corpus"
"$cxx" $flags -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  "$here/fuzz_container.cpp" -o "$build/fuzz_lct_container"
"$build/fuzz_lct_container" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
  -print_final_stats=1 "$build/corpus"
