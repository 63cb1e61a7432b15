#!/usr/bin/env python3
"""Markdown tables from the outputs of bench/peers/run.sh (stdlib only).

    python3 summarize.py --peers peers.json --resilin resilin_bm.json \
        [--cli-hyperfine cli_hyperfine.json --cli-seconds cli_seconds.txt]

Each option may be given several times (the outputs of several run.sh invocations): every rate
is then the best over all of them, every time the smallest.

resilin: Google Benchmark JSON of bm_soft_dtw_host --benchmark_filter=threads:1 with repetitions;
its items_per_second is cells per CPU second (the library default without UseRealTime()); the
wall-clock rate is items_per_second * cpu_time / real_time. Best repetition of each.
"""
import argparse
import json
import re

SHAPES = ["(512, 64, 64, 2)", "(128, 256, 256, 1)", "(16, 1024, 1024, 8)", "(2, 4096, 4096, 1)"]
VALUE_PEERS = ["tslearn soft_dtw", "aeon soft_dtw_distance", "soft-dtw (Blondel) value"]
GRAD_PEERS = ["tslearn SoftDTW+jacobian_product", "tslearn soft_dtw_alignment+jacobian_product",
              "soft-dtw (Blondel) value+grad"]


def resilin_rates(paths):
    """{(kind, precision, shape index): (best cells/cpu-s, best cells/wall-s)}"""
    rates = {}
    benchmarks = []
    for path in paths:
        with open(path) as f:
            bm = json.load(f)
        benchmarks += bm["benchmarks"]
    for b in benchmarks:
        if b.get("run_type", "iteration") != "iteration":
            continue
        m = re.match(r"BM_soft_dtw_(value|value_and_grad)_host<(\w+)>/shape:(\d)/threads:1",
                     b["name"])
        if not m:
            continue
        key = ("grad" if m.group(1) == "value_and_grad" else "value", m.group(2), int(m.group(3)))
        cpu_rate = b["items_per_second"]
        wall_rate = cpu_rate * b["cpu_time"] / b["real_time"]
        old = rates.get(key, (0.0, 0.0))
        rates[key] = (max(old[0], cpu_rate), max(old[1], wall_rate))
    return rates, bm.get("context", {})


def merge_peers(paths):
    """The first file, with every timing replaced by the best over all files."""
    runs = []
    for path in paths:
        with open(path) as f:
            runs.append(json.load(f))
    out = runs[0]
    for part, key in (("soft_dtw", ("shape", "peer")), ("gunpoint", ("peer",))):
        for r in out.get(part, []):
            for other in runs[1:]:
                for o in other.get(part, []):
                    if all(o[k] == r[k] for k in key) and o.get("pairs") == r.get("pairs"):
                        for f in ("cells_per_cpu_s", "cells_per_wall_s"):
                            if f in r:
                                r[f] = max(r[f], o[f])
                        for f in ("cpu_s", "wall_s"):
                            r[f] = min(r[f], o[f])
    return out


def fmt(x):
    return "—" if x is None else (f"{x / 1e6:.1f}" if x < 1e9 else f"{x / 1e6:,.0f}")


def peer_rate(rows, shape, peer, field):
    for r in rows:
        if r["shape"] == shape and r["peer"] == peer:
            return r[field], r["pairs"], r["batch"]
    return None, None, None


def table(rows, rates, kind, peers, field, idx):
    head = ["shape (B, n, m, d)", "resilin"] + peers + ["resilin ÷ fastest peer"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, shape in enumerate(SHAPES):
        res = rates.get((kind, "double", i), (None, None))[idx]
        cells, best = [], None
        for p in peers:
            v, pairs, batch = peer_rate(rows, shape, p, field)
            note = f" ({pairs}/{batch} pairs)" if v is not None and pairs != batch else ""
            cells.append(fmt(v) + note)
            if v is not None:
                best = v if best is None else max(best, v)
        ratio = f"{res / best:.1f}×" if res and best else "—"
        out.append("| " + " | ".join([shape, fmt(res)] + cells + [ratio]) + " |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peers", required=True, action="append")
    ap.add_argument("--resilin", required=True, action="append")
    ap.add_argument("--cli-hyperfine", action="append")
    ap.add_argument("--cli-seconds", action="append")
    a = ap.parse_args()
    peers = merge_peers(a.peers)
    rates, ctx = resilin_rates(a.resilin)
    rows = peers.get("soft_dtw", [])

    print("### soft-DTW value, γ = 1, squared Euclidean, float64, 1 thread: Mcells per CPU second\n")
    print(table(rows, rates, "value", VALUE_PEERS, "cells_per_cpu_s", 0))
    print("\n### soft-DTW value + gradient, same: Mcells per CPU second\n")
    print("resilin: value, dS/dx and dS/dy (values_and_grads); the peers: value and dS/dx only.\n")
    print(table(rows, rates, "grad", GRAD_PEERS, "cells_per_cpu_s", 0))
    print("\n### the same two, Mcells per wall-clock second (machine under load: noisier)\n")
    print(table(rows, rates, "value", VALUE_PEERS, "cells_per_wall_s", 1))
    print()
    print(table(rows, rates, "grad", GRAD_PEERS, "cells_per_wall_s", 1))
    f32 = [rates.get((k, "float", i), (None, None))[0] for k in ("value", "grad") for i in range(4)]
    if any(f32):
        print("\nresilin float32 (no peer has float32 soft-DTW on the host), Mcells/CPU-s, "
              "value: " + ", ".join(fmt(v) for v in f32[:4]) + "; value+grad: " +
              ", ".join(fmt(v) for v in f32[4:]))

    print("\n### first pair of each shape: values (and dS/dx summaries) as each code prints them\n")
    print("| shape | code | value | sum dS/dx | sum |dS/dx| | dS/dx[0,0] |")
    print("|---|---|---|---|---|---|")
    for c in peers.get("value_checks", []):
        for name, v in c.items():
            if name == "shape":
                continue
            g = [repr(v[k]) if k in v else "" for k in ("sum_gx", "sum_abs_gx", "gx00")]
            print(f"| {c['shape']} | {name} | {v['value']!r} | " + " | ".join(g) + " |")

    print("\n### agreement with resilin on those pairs (relative differences, largest over the peers)\n")
    print("| shape | value, all peers but aeon | aeon value | sum |dS/dx| | dS/dx[0,0] |")
    print("|---|---|---|---|---|")
    for c in peers.get("value_checks", []):
        r = c.get("resilin")
        if not r:
            continue
        rel = lambda a, b: abs(a - b) / abs(b)  # noqa: E731
        vals = [rel(v["value"], r["value"]) for k, v in c.items()
                if k not in ("shape", "resilin") and not k.startswith("aeon")]
        aeon = [f"{v['value']!r} vs {r['value']!r}" if rel(v["value"], r["value"]) > 1e-12
                else f"{rel(v['value'], r['value']):.1e}" for k, v in c.items() if k.startswith("aeon")]
        ga = [rel(v["sum_abs_gx"], r["sum_abs_gx"]) for k, v in c.items() if "sum_abs_gx" in v and k != "resilin"]
        g0 = [rel(v["gx00"], r["gx00"]) for k, v in c.items() if "gx00" in v and k != "resilin"]
        print(f"| {c['shape']} | {max(vals):.1e} | {'; '.join(aeon) or '—'} | {max(ga):.1e} | {max(g0):.1e} |")

    gp = peers.get("gunpoint", [])
    print("\n### GunPoint 1-NN DTW, full window, TRAIN 50 × TEST 150 × length 150 (1 thread)\n")
    print("| code | best CPU s | best wall s | error rate | errors |")
    print("|---|---|---|---|---|")
    if a.cli_seconds:
        lines = []
        for path in a.cli_seconds:
            with open(path) as f:
                lines += [ln.split() for ln in f if ln.strip()]
        secs = [float(x[0]) for x in lines]
        err = lines[0][1] if lines and len(lines[0]) > 1 else "?"
        nerr = lines[0][2] if lines and len(lines[0]) > 2 else "?"
        print(f"| resilin classify (its own `seconds`: the distance matrix + argmin, wall) | — | "
              f"{min(secs):.3f} | {err} | {nerr}/150 |")
    for path in a.cli_hyperfine or []:
        with open(path) as f:
            h = json.load(f)["results"][0]
        print(f"| resilin classify, whole process under hyperfine ({len(h['times'])} runs; "
              f"CPU = mean user + sys) | {h['user'] + h['system']:.3f} | {h['min']:.3f} (min; "
              f"mean {h['mean']:.3f}) | | |")
    for r in gp:
        print(f"| {r['peer']} | {r['cpu_s']:.3f} | {r['wall_s']:.3f} | {r['error_rate']:.4f} | "
              f"{r['errors']}/150 |")

    sem = peers.get("semantics", {})
    if sem:
        print("\n### definitions on x = [0, 1, 2], γ = 1\n")
        for k, v in sem.items():
            print(f"- {k} = {v!r}")
    if ctx:
        print(f"\nGoogle Benchmark context: {ctx.get('num_cpus')} CPUs at {ctx.get('mhz_per_cpu')} MHz, "
              f"load average {ctx.get('load_avg')}, library build {ctx.get('library_build_type')}")


if __name__ == "__main__":
    main()
