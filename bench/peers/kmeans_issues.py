"""k-means at the sizes of two tslearn issues, for bench/peers/kmeans_issues.sh.

  python kmeans_issues.py gen DIR        # writes DIR/ts310.tsv (+ _500, _1000) and DIR/ts408.tsv
  python kmeans_issues.py tslearn FILE K MAX_ITER MAX_ITER_BARYCENTER   # (needs tslearn)

tslearn#310: k-means with soft-DTW of 115 series about 4000 long, 20 clusters, 3 rounds of 3
barycentre iterations: "24+ h". tslearn#408: 25,000 series of 60 samples with soft-DTW, "2+
hours to fit and predict". The data: five noisy shapes with random shifts and speeds (and, for
#310, a random walk on top), labels in the first column (UCR TSV); numpy only, fixed seeds.
"""
import sys
import time

import numpy as np


def shapes(tt, wide):
    # the five classes; #310's long series get more periods
    f = 3 if wide else 1
    return [np.sin(2 * np.pi * f * tt), np.sign(np.sin(2 * np.pi * (2 if wide else 1) * tt)), 2 * tt - 1,
            np.exp(-((tt - 0.5) / 0.1) ** 2), np.sin(2 * np.pi * (8 if wide else 3) * tt) * tt]


def write(path, labels, rows):
    with open(path, "w") as f:
        for k, row in zip(labels, rows):
            f.write(str(int(k)) + "\t" + "\t".join(f"{v:.5f}" for v in row) + "\n")


def gen(out):
    rng = np.random.default_rng(310)
    n, length = 115, 4000
    labels = rng.integers(0, 5, n)
    rows = []
    t = np.linspace(0, 1, length)
    for i in range(n):
        shift, speed = rng.uniform(-0.05, 0.05), rng.uniform(0.9, 1.1)
        tt = np.clip((t - 0.5) * speed + 0.5 + shift, 0, 1)
        s = shapes(tt, True)[labels[i]]
        rows.append(s + 0.3 * rng.standard_normal(length) + 0.02 * np.cumsum(rng.standard_normal(length)))
    rows = np.array(rows)
    write(f"{out}/ts310.tsv", labels, rows)
    for step, size in ((8, 500), (4, 1000)):  # every 8th and 4th sample of the same series
        write(f"{out}/ts310_{size}.tsv", labels, rows[:, ::step])

    rng = np.random.default_rng(408)
    n, length = 25_000, 60
    labels = rng.integers(0, 5, n)
    t = np.linspace(0, 1, length)
    shift = rng.uniform(-0.1, 0.1, (n, 1))
    speed = rng.uniform(0.9, 1.1, (n, 1))
    tt = np.clip((t - 0.5) * speed + 0.5 + shift, 0, 1)
    x = np.choose(labels[:, None], shapes(tt, False)) + 0.3 * rng.standard_normal((n, length))
    write(f"{out}/ts408.tsv", labels, x)


def run_tslearn(path, k, max_iter, max_iter_barycenter):
    from sklearn.metrics import adjusted_rand_score
    from tslearn.clustering import TimeSeriesKMeans
    from tslearn.preprocessing import TimeSeriesScalerMeanVariance

    d = np.loadtxt(path, delimiter="\t")
    x = TimeSeriesScalerMeanVariance().fit_transform(d[:, 1:])  # as resilin's --znorm
    start = time.time()
    km = TimeSeriesKMeans(n_clusters=k, metric="softdtw", max_iter=max_iter,
                          max_iter_barycenter=max_iter_barycenter, n_jobs=2, random_state=0).fit(x)
    print(f"tslearn {path}: {time.time() - start:.1f} s, {km.n_iter_} rounds, "
          f"ARI {adjusted_rand_score(d[:, 0], km.labels_):.4f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2])
    else:
        run_tslearn(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
