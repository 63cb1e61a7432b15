#!/usr/bin/env bash
# Runs one resilin command with --backend host and with --backend cuda and compares what they
# print: the same lines and fields, text fields equal, numbers within a relative tolerance. A
# field of aeon .ts data (values separated by ',' and ':', as barycenter writes for several
# channels or unlabelled data) is compared part by part (it was compared as text: a 1e-15
# difference in one value failed any tolerance).
#   check_cli_backends.sh RESILIN [--tol T] [--tail N] -- ARGS...
# --tol: max |cuda - host| / max(1, |host|) per number (default 1e-9); --tail N: compare only
# the last N stdout lines (classify's summary row holds times). Prints "SKIPPED: ..." and exits 0
# when the build or the machine has no CUDA device (the CTest SKIP_REGULAR_EXPRESSION).
set -uo pipefail
resilin="$1"; shift
tol=1e-9; tail_lines=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case "$1" in
    --tol) tol="$2"; shift 2 ;;
    --tail) tail_lines="$2"; shift 2 ;;
    *) echo "check_cli_backends: unknown option $1" >&2; exit 2 ;;
  esac
done
shift  # --
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
for backend in host cuda; do
  "$resilin" "$@" --backend "$backend" >"$work/$backend.out" 2>"$work/$backend.err"
  rc=$?
  if [ "$backend" = cuda ] && grep -q "no CUDA device is available\|has no CUDA backend" "$work/cuda.err"; then
    echo "SKIPPED: $(cat "$work/cuda.err")"
    exit 0
  fi
  if [ "$rc" -ne 0 ]; then
    echo "resilin $* --backend $backend: exit $rc"; cat "$work/$backend.err"; exit 1
  fi
done
if [ "$tail_lines" -gt 0 ]; then
  for backend in host cuda; do tail -n "$tail_lines" "$work/$backend.out" >"$work/$backend.cmp"; done
else
  for backend in host cuda; do cp "$work/$backend.out" "$work/$backend.cmp"; done
fi
awk -F'\t' -v tol="$tol" '
  function isnum(s) { return s ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ }
  function abs(v) { return v < 0 ? -v : v }
  NR == FNR { host[FNR] = $0; nh = FNR; next }
  {
    nc = FNR
    if (!(FNR in host)) { printf "line %d: only the cuda run has it\n", FNR; bad = 1; next }
    n = split(host[FNR], h, "\t")
    if (n != NF) { printf "line %d: %d fields on the host, %d with cuda\n", FNR, n, NF; bad = 1; next }
    for (k = 1; k <= NF; ++k) {
      m = split(h[k], hp, /[,:]/)
      hs = h[k]; gsub(/[^,:]/, "", hs); cs = $k; gsub(/[^,:]/, "", cs)  # the same separators, in order
      if (split($k, cp, /[,:]/) != m || hs != cs) { printf "line %d field %d: host \"%s\", cuda \"%s\"\n", FNR, k, h[k], $k; bad = 1; continue }
      for (q = 1; q <= m; ++q) {
        if (isnum(hp[q]) && isnum(cp[q])) {
          d = abs(cp[q] - hp[q]) / (abs(hp[q]) > 1 ? abs(hp[q]) : 1)
          if (d > worst) worst = d
          if (d > tol) { printf "line %d field %d part %d: host %s, cuda %s\n", FNR, k, q, hp[q], cp[q]; bad = 1 }
        } else if (hp[q] != cp[q]) { printf "line %d field %d: host \"%s\", cuda \"%s\"\n", FNR, k, h[k], $k; bad = 1 }
      }
    }
  }
  END {
    if (nc != nh) { printf "%d lines on the host, %d with cuda\n", nh, nc; bad = 1 }
    printf "compared %d lines, worst relative difference %g (tolerance %g)\n", nh, worst, tol
    exit bad
  }' "$work/host.cmp" "$work/cuda.cmp"
