#!/bin/bash
# Paired comparison of two versions of the lct host codec on one core (8 Mi bf16 N(0, 0.02)):
# both are linked into one program and timed alternately, so that the VM's slow and fast phases
# (rates here move by +-30 % from minute to minute) fall on both alike.
#   bench/lct/paired/paired.sh BASE_INCLUDE_DIR NEW_INCLUDE_DIR [pairs]
# e.g. a committed version:  git archive HEAD~1 include | tar -x -C /tmp/base
#                            bench/lct/paired/paired.sh /tmp/base/include include 60
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
base=$(cd "$1" && pwd); new=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags="-O3 -march=native -std=c++20"
sed 's/VARIANT/head/g' "$here/variant.cpp.in" > "$work/head.cpp"
sed 's/VARIANT/new/g' "$here/variant.cpp.in" > "$work/new.cpp"
g++ $flags -I"$base" -c "$work/head.cpp" -o "$work/head.o"
g++ $flags -I"$new" -c "$work/new.cpp" -o "$work/new.o"
g++ $flags "$here/paired_main.cpp" "$work/head.o" "$work/new.o" -o "$work/paired" -pthread
"$work/paired" "${3:-40}"
