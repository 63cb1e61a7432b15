#!/usr/bin/env bash
# k-means with soft-DTW at the sizes of tslearn#310 and #408 (kmeans_issues.py), resilin's tool
# on both cores against tslearn (n_jobs = 2). Reproduces the k-means section of
# bench/results/2026-12-07-zen4-2c-session40.md. tslearn at #310's full length would take hours:
# it runs at 500 and 1000 samples (every 8th and 4th sample), resilin at those and at 4000.
#
#   bench/peers/kmeans_issues.sh RESILIN   # RESILIN: the tool, built with -O3 -march=native
#
# Environment: VENV (/tmp/peers-venv, made with numpy and tslearn if missing), OUT
# (/tmp/kmeans-issues), TSLEARN (0: resilin only), TSLEARN_408 (0: skip tslearn on #408's set,
# which runs 2 rounds only: about 20 min).
set -euo pipefail
RESILIN=${1:?usage: kmeans_issues.sh path/to/resilin}
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${VENV:-/tmp/peers-venv}
OUT=${OUT:-/tmp/kmeans-issues}
mkdir -p "$OUT"
[[ -x $VENV/bin/python ]] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q numpy tslearn; }
"$VENV/bin/python" "$HERE/kmeans_issues.py" gen "$OUT"

timed() {  # label, command...: wall time and peak RSS of the command, its last lines
  local label=$1; shift
  /usr/bin/time -f "$label: %e s wall, %M KB peak RSS" "$@" > "$OUT/last.out" 2> "$OUT/last.err"
  tail -n 1 "$OUT/last.err"
  grep -E '^(inertia|iterations|ari)' "$OUT/last.out" | tr '\n' ' '; echo
}
for f in ts310_500 ts310_1000 ts310; do
  timed "resilin #310 $f" "$RESILIN" kmeans -m soft-dtw -k 20 --restarts 1 --iterations 3 --max-iter 3 --znorm "$OUT/$f.tsv"
done
timed "resilin #408" "$RESILIN" kmeans -m soft-dtw -k 5 --restarts 1 --iterations 50 --znorm "$OUT/ts408.tsv"
[[ ${TSLEARN:-1} != 0 ]] || exit 0
for f in ts310_500 ts310_1000; do
  "$VENV/bin/python" "$HERE/kmeans_issues.py" tslearn "$OUT/$f.tsv" 20 3 3
done
if [[ ${TSLEARN_408:-1} != 0 ]]; then
  "$VENV/bin/python" "$HERE/kmeans_issues.py" tslearn "$OUT/ts408.tsv" 5 2 100
fi
