#!/usr/bin/env python3
"""Single-thread timings of resilin's Python peers: tslearn, aeon, Blondel's soft-dtw, dtaidistance.

Run through bench/peers/run.sh (which makes the venv and builds the resilin side). By hand:

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 /tmp/peers-venv/bin/python bench/peers/peers.py \
        --resilin-check /tmp/peerb/value_check --ucr /work/shared/ucr --json out.json

Two parts:
  1. soft-DTW, gamma = 1, squared Euclidean, float64, on the (B, n, m, d) shapes of
     bench/host/bm_soft_dtw.cpp: value, and value + gradient wrt x. cells/s = pairs * n * m / s,
     best of --repeats runs over the pairs (a prefix of the batch when the batch has more than
     --max-cells cells; cells/s is per pair either way), per CPU second and per wall second. The first pair's value and gradient from
     every peer are printed next to resilin's (bench/peers/value_check.cpp) when --resilin-check
     is given.
  2. 1-NN DTW (full window) on UCR GunPoint, TRAIN 50 x TEST 150: distance matrix + argmin (first
     training series on ties), best of --repeats, with the error rate.
Every timing is one thread: the environment variables below are set before numba is imported,
and every call that takes n_jobs / parallel gets 1 / False.
"""
import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings

for _v in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")
warnings.simplefilter("ignore")

import numpy as np  # noqa: E402

SHAPES = [(512, 64, 64, 2), (128, 256, 256, 1), (16, 1024, 1024, 8), (2, 4096, 4096, 1)]
GAMMA = 1.0


def try_import(name):
    try:
        return __import__(name, fromlist=["_"])
    except Exception as e:  # noqa: BLE001 - report whatever kept the peer out
        print(f"# {name}: not importable ({type(e).__name__}: {e})")
        return None


def version(dist):
    from importlib.metadata import PackageNotFoundError, version as v
    try:
        return v(dist)
    except PackageNotFoundError:
        return None


def best_time(fn, repeats, budget_s=None):
    """(best wall s, best CPU s) of `repeats` calls of fn(), after the caller's warm-up call.

    CPU time (time.process_time: this process, all threads) is the number to compare on a loaded
    machine: everything here runs on one thread, and Google Benchmark's items_per_second, which
    the resilin side reports, is per CPU second too. Stops early, after two calls, once the calls
    so far took more than budget_s of wall time.
    """
    best_wall = best_cpu = float("inf")
    spent = 0.0
    for i in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
        spent += wall
        if budget_s is not None and i >= 1 and spent > budget_s:
            break
    return best_wall, best_cpu


# --- the peers' soft-DTW, one pair at a time, each in its own input layout -------------------------

def make_peers():
    """name -> (kind, prepare(x, y) -> per-pair inputs, run(inputs) -> value or (value, gx))."""
    peers = {}
    tm = try_import("tslearn.metrics")
    if tm is not None:
        # tslearn.metrics.soft_dtw: numba, accumulates (n+1, m+1) with the point cost inline.
        peers["tslearn soft_dtw"] = ("value", lambda x, y: (x, y),
                                     lambda a: tm.soft_dtw(a[0], a[1], gamma=GAMMA))

        # Blondel's API as tslearn ships it: D = SquaredEuclidean(x, y), SoftDTW(D).compute(),
        # E = .grad(), dS/dx = D.jacobian_product(E).
        def ts_class(a):
            D = tm.SquaredEuclidean(a[0], a[1])
            s = tm.SoftDTW(D, gamma=GAMMA)
            v = s.compute()
            return v, D.jacobian_product(s.grad())
        peers["tslearn SoftDTW+jacobian_product"] = ("grad", lambda x, y: (x, y), ts_class)

        # tslearn.metrics.soft_dtw_alignment (E, value) then the same jacobian product.
        def ts_align(a):
            E, v = tm.soft_dtw_alignment(a[0], a[1], gamma=GAMMA)
            return v, tm.SquaredEuclidean(a[0], a[1]).jacobian_product(E)
        peers["tslearn soft_dtw_alignment+jacobian_product"] = ("grad", lambda x, y: (x, y), ts_align)

    sdtw = try_import("sdtw")
    if sdtw is not None:
        from sdtw.distance import SquaredEuclidean as BSq

        def b_value(a):
            return sdtw.SoftDTW(BSq(a[0], a[1]), gamma=GAMMA).compute()

        def b_grad(a):
            D = BSq(a[0], a[1])
            s = sdtw.SoftDTW(D, gamma=GAMMA)
            v = s.compute()
            return v, D.jacobian_product(s.grad())
        peers["soft-dtw (Blondel) value"] = ("value", lambda x, y: (x, y), b_value)
        peers["soft-dtw (Blondel) value+grad"] = ("grad", lambda x, y: (x, y), b_grad)

    ad = try_import("aeon.distances")
    if ad is not None:
        if hasattr(ad, "soft_dtw_distance"):
            # aeon wants (n_channels, n_timepoints); transposed once, outside the timing.
            peers["aeon soft_dtw_distance"] = (
                "value",
                lambda x, y: (np.ascontiguousarray(x.T), np.ascontiguousarray(y.T)),
                lambda a: ad.soft_dtw_distance(a[0], a[1], gamma=GAMMA))
        else:
            print("# aeon: no aeon.distances.soft_dtw_distance in this release")
        print("# aeon: no soft-DTW gradient in aeon.distances (value only)")
    return peers


def resilin_check(exe, x, y):
    """resilin's value, value-only value, sum gx, sum|gx|, gx[0,0], sum|gy| for one pair."""
    with tempfile.NamedTemporaryFile(suffix=".bin", delete=False) as f:
        np.ascontiguousarray(x, dtype=np.float64).tofile(f)
        np.ascontiguousarray(y, dtype=np.float64).tofile(f)
        path = f.name
    try:
        out = subprocess.run([exe, path, str(x.shape[0]), str(y.shape[0]), str(x.shape[1]),
                              repr(GAMMA)], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    v, v_only, sx, ax, g00, ay = (float(t) for t in out.split())
    return {"value": v, "value_only": v_only, "sum_gx": sx, "sum_abs_gx": ax, "gx00": g00,
            "sum_abs_gy": ay}


def soft_dtw_part(args, results):
    peers = make_peers()
    rng = np.random.default_rng(42)
    # JIT warm-up on a tiny pair (numba compiles per signature; 2-D float64 for all shapes).
    xw, yw = rng.standard_normal((8, 2)), rng.standard_normal((9, 2))
    for name, (_, prep, run) in peers.items():
        run(prep(xw, yw))
    rows, checks = [], []
    for (B, n, m, d) in SHAPES:
        X = rng.standard_normal((B, n, d))
        Y = rng.standard_normal((B, m, d))
        pairs = max(1, min(B, args.max_cells // (n * m)))
        shape = f"({B}, {n}, {m}, {d})"
        print(f"\n## shape {shape}: timing {pairs} of {B} pairs, best of {args.repeats}", flush=True)

        # values of the first pair
        check = {"shape": shape}
        if args.resilin_check:
            check["resilin"] = resilin_check(args.resilin_check, X[0], Y[0])
            r = check["resilin"]
            print(f"  resilin                                      value {r['value']!r:<24} "
                  f"sum dS/dx {r['sum_gx']!r} sum|dS/dx| {r['sum_abs_gx']!r} dS/dx[0,0] {r['gx00']!r}")
        for name, (kind, prep, run) in peers.items():
            out = run(prep(X[0], Y[0]))
            if kind == "grad":
                v, g = out
                check[name] = {"value": float(v), "sum_gx": float(g.sum()),
                               "sum_abs_gx": float(np.abs(g).sum()), "gx00": float(g[0, 0])}
                print(f"  {name:<44} value {float(v)!r:<24} sum dS/dx {float(g.sum())!r} "
                      f"sum|dS/dx| {float(np.abs(g).sum())!r} dS/dx[0,0] {float(g[0, 0])!r}")
            else:
                check[name] = {"value": float(out)}
                print(f"  {name:<44} value {float(out)!r}")
        checks.append(check)

        # timings
        for name, (kind, prep, run) in peers.items():
            inputs = [prep(X[b], Y[b]) for b in range(pairs)]
            run(inputs[0])  # warm (also any per-shape allocation paths)

            def all_pairs():
                for a in inputs:
                    run(a)
            wall, cpu = best_time(all_pairs, args.repeats, args.budget)
            cells = pairs * n * m
            rows.append({"shape": shape, "peer": name, "kind": kind, "pairs": pairs, "batch": B,
                         "wall_s": wall, "cpu_s": cpu, "cells_per_cpu_s": cells / cpu,
                         "cells_per_wall_s": cells / wall})
            print(f"  {name:<44} {kind:<5} cpu {cpu:8.3f} s {cells / cpu / 1e6:8.2f} Mcells/s | "
                  f"wall {wall:8.3f} s {cells / wall / 1e6:8.2f} Mcells/s", flush=True)
    results["soft_dtw"] = rows
    results["value_checks"] = checks


# --- 1-NN DTW on GunPoint ----------------------------------------------------------------------------

def load_ucr(path):
    a = np.loadtxt(path, delimiter="\t")
    return a[:, 1:].copy(), a[:, 0].astype(int)


def gunpoint_part(args, results):
    base = os.path.join(args.ucr, "GunPoint", "GunPoint_")
    Xtr, ytr = load_ucr(base + "TRAIN.tsv")
    Xte, yte = load_ucr(base + "TEST.tsv")
    print(f"\n## GunPoint 1-NN DTW, full window: TRAIN {Xtr.shape}, TEST {Xte.shape}, "
          f"best of {args.repeats}")
    cells = Xtr.shape[0] * Xte.shape[0] * Xtr.shape[1] * Xte.shape[1]
    methods = {}

    ad = try_import("aeon.distances")
    if ad is not None:
        tr3, te3 = Xtr[:, None, :].copy(), Xte[:, None, :].copy()
        methods["aeon dtw_pairwise_distance"] = (
            "matrix", lambda: ad.dtw_pairwise_distance(te3, tr3, n_jobs=1))
        try:
            from aeon.classification.distance_based import KNeighborsTimeSeriesClassifier

            def aeon_knn():
                clf = KNeighborsTimeSeriesClassifier(n_neighbors=1, distance="dtw", n_jobs=1)
                clf.fit(tr3, ytr)
                return clf.predict(te3)
            methods["aeon KNeighborsTimeSeriesClassifier fit+predict"] = ("labels", aeon_knn)
        except Exception as e:  # noqa: BLE001
            print(f"# aeon KNeighborsTimeSeriesClassifier: {type(e).__name__}: {e}")
    tm = try_import("tslearn.metrics")
    if tm is not None:
        methods["tslearn cdist_dtw"] = ("matrix", lambda: tm.cdist_dtw(Xte, Xtr, n_jobs=1))
    dtw = try_import("dtaidistance.dtw")
    if dtw is not None:
        both = np.vstack([Xtr, Xte])  # rows 0..49 train, 50..199 test
        ntr = Xtr.shape[0]

        def dtai():
            M = dtw.distance_matrix_fast(both, block=((0, ntr), (ntr, both.shape[0])),
                                         compact=False, parallel=False)
            return M[:ntr, ntr:].T
        methods["dtaidistance distance_matrix_fast (C)"] = ("matrix", dtai)

    rows = []
    for name, (kind, fn) in methods.items():
        out = fn()  # warm-up (JIT) and the answer
        pred = ytr[np.argmin(out, axis=1)] if kind == "matrix" else np.asarray(out)
        err = float(np.mean(pred != yte))
        wall, cpu = best_time(fn, args.repeats, args.budget)
        rows.append({"peer": name, "wall_s": wall, "cpu_s": cpu, "error_rate": err,
                     "errors": int(np.sum(pred != yte)), "cells_per_cpu_s": cells / cpu})
        print(f"  {name:<48} cpu {cpu:7.3f} s  wall {wall:7.3f} s  error_rate {err:.4f} "
              f"({int(np.sum(pred != yte))}/{len(yte)})  {cells / cpu / 1e6:8.2f} Mcells/cpu-s",
              flush=True)
    results["gunpoint"] = rows


def semantics_part(results):
    """Where the peers' definitions differ on purpose or by accident (tiny inputs)."""
    notes = {}
    x = np.array([[0.0], [1.0], [2.0]])
    tm = try_import("tslearn.metrics")
    ad = try_import("aeon.distances")
    if tm is not None:
        notes["tslearn soft_dtw(x, x)"] = float(tm.soft_dtw(x, x, gamma=1.0))
    if ad is not None and hasattr(ad, "soft_dtw_distance"):
        notes["aeon soft_dtw_distance(x, x)"] = float(ad.soft_dtw_distance(x.T.copy(), x.T.copy(), gamma=1.0))
        notes["aeon soft_dtw_distance(x, x + 1e-12)"] = float(
            ad.soft_dtw_distance(x.T.copy(), x.T.copy() + 1e-12, gamma=1.0))
    print("\n## definitions on x = [0, 1, 2] (soft-DTW, gamma = 1)")
    for k, v in notes.items():
        print(f"  {k:<40} {v!r}")
    results["semantics"] = notes


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--budget", type=float, default=20.0,
                   help="stop repeating a timing after 2 runs once its runs took this many seconds")
    p.add_argument("--max-cells", type=int, default=34_000_000,
                   help="time at most this many cells per run (a prefix of each batch)")
    p.add_argument("--resilin-check", help="path of the built bench/peers/value_check")
    p.add_argument("--ucr", default="/work/shared/ucr")
    p.add_argument("--json", help="write all results here")
    p.add_argument("--skip-soft-dtw", action="store_true")
    p.add_argument("--skip-gunpoint", action="store_true")
    args = p.parse_args()

    results = {"python": platform.python_version(),
               "env": {k: os.environ.get(k) for k in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS")},
               "versions": {k: version(k) for k in ("numpy", "numba", "scipy", "tslearn", "aeon",
                                                    "soft-dtw", "dtaidistance", "scikit-learn")}}
    print(f"# Python {results['python']}; " +
          ", ".join(f"{k} {v}" for k, v in results["versions"].items()))
    print(f"# {results['env']}")
    semantics_part(results)
    if not args.skip_soft_dtw:
        soft_dtw_part(args, results)
    if not args.skip_gunpoint:
        gunpoint_part(args, results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
