#!/bin/sh
# Builds the libFuzzer targets with clang (libFuzzer + ASan + UBSan) and runs each in turn:
#   lct       the lct container parser and decoder, and the codebook reader
#             (tests/lct/fuzz; seeds written by make_seeds)
#   dataset   the UCR TSV and .ts readers, z-normalisation and the .ts round trip
#             (tests/apps/fuzz; seeds committed in seeds/)
# usage: tests/fuzz/run_fuzz.sh BUILD_DIR SECONDS_EACH [TARGET...]   (default: every target)
# Exits 0 (after saying so) when clang++ is not available; otherwise with the first failure.
set -eu
build=${1:?usage: run_fuzz.sh BUILD_DIR SECONDS_EACH [TARGET...]}
seconds=${2:?usage: run_fuzz.sh BUILD_DIR SECONDS_EACH [TARGET...]}
shift 2
targets=${*:-lct dataset}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cxx=""
for c in "${CXX_FUZZ:-}" clang++-14 clang++; do
  if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then cxx=$c; break; fi
done
if [ -z "$cxx" ]; then
  echo "run_fuzz.sh: clang++ not found: fuzzers skipped"
  exit 0
fi
flags="-std=c++20 -O1 -g -I$root/include"
fuzz_flags="-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"
for target in $targets; do
  corpus="$build/corpus-$target"
  mkdir -p "$corpus"
  case $target in
    lct)
      "$cxx" $flags "$root/tests/lct/fuzz/make_seeds.cpp" -o "$build/make_seeds"
      "$build/make_seeds" "$corpus"
      source="$root/tests/lct/fuzz/fuzz_container.cpp" max_len=65536 ;;
    dataset)
      cp "$root"/tests/apps/fuzz/seeds/* "$corpus"/
      # 4 KiB of text: padding to the longest series stays within the RSS limit
      source="$root/tests/apps/fuzz/fuzz_dataset.cpp" max_len=4096 ;;
    *) echo "run_fuzz.sh: unknown target '$target' (lct, dataset)"; exit 2 ;;
  esac
  echo "=== fuzzing $target for $seconds s"
  "$cxx" $flags $fuzz_flags "$source" -o "$build/fuzz_$target"
  "$build/fuzz_$target" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 \
    -artifact_prefix="$build/$target-" \
    -print_final_stats=1 "$corpus"
done
