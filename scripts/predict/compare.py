#!/usr/bin/python3
"""Out-of-sample memberships (ssnmf predict) against the solve and scikit-learn.

Subcommands, run by scripts/predict/run.sh:

  split DATA.csv[.gz] OUTDIR SEED
      write OUTDIR/train.csv and OUTDIR/test.csv, an 80/20 split of the rows
      drawn with numpy's default_rng(SEED), each in the input's row order,
      and OUTDIR/test_rows.txt, the test rows' 0-based indices in DATA.

  reproduce SOLVED.csv PREDICTED.csv
      print the mean L1 difference of the memberships and the share of rows
      whose cluster changes, predicting the training rows.

  score NAME DATA OUTDIR
      print one table row: the ARI on the test rows of ssnmf predict
      (OUTDIR/test.pred.csv, from the model of train.csv), of the solve on
      all rows (OUTDIR/all.w.csv at the test rows), and of scikit-learn's
      KMeans and GaussianMixture fitted on the standardized train rows
      (standardized by the train rows' mean and std) predicting the test
      rows. GaussianMixture is given GMM_SECONDS (env, default 600) of CPU.

  ari TEST.csv PREDICTED.csv
      print the ARI of the predicted clusters against TEST.csv's labels
      (scripts/predict/recall.sh).

scikit-learn is used here only, to compare; ssnmf never runs it.
"""
import gzip
import os
import signal
import sys
import time

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture


def read_table(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        header = f.readline().strip().split(",")
        lab = header.index("label")
        rows = [line.rstrip("\n").split(",") for line in f]
    feats = [i for i in range(len(header)) if i != lab]
    x = np.array([[float(r[i]) for i in feats] for r in rows])
    y = np.array([r[lab] for r in rows])
    return header, x, y, rows


def split(data, outdir, seed):
    opener = gzip.open if data.endswith(".gz") else open
    with opener(data, "rt") as f:
        header = f.readline()
        lines = f.readlines()
    n = len(lines)
    rng = np.random.default_rng(int(seed))
    test = np.zeros(n, dtype=bool)
    test[rng.permutation(n)[: n // 5]] = True
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "train.csv"), "w") as tr, open(os.path.join(outdir, "test.csv"), "w") as te:
        tr.write(header)
        te.write(header)
        for i, line in enumerate(lines):
            (te if test[i] else tr).write(line)
    np.savetxt(os.path.join(outdir, "test_rows.txt"), np.flatnonzero(test), fmt="%d")
    k = len(set(line.rsplit(",", 1)[1] for line in lines))
    print(k)


def memberships(path):
    with open(path) as f:
        f.readline()
        a = np.loadtxt(f, delimiter=",")
    a = np.atleast_2d(a)
    return a[:, 1:-2], a[:, -2].astype(int)


def reproduce(solved, predicted):
    w, cw = memberships(solved)
    p, cp = memberships(predicted)
    assert w.shape == p.shape, (w.shape, p.shape)
    l1 = np.abs(w - p).sum(axis=1)
    print(f"{l1.mean():.3g} {np.mean(cw != cp):.4f} {l1.max():.3g}")


class Timeout(Exception):
    pass


def score(name, data, outdir):
    _, x, y, _ = read_table(data)
    test = np.loadtxt(os.path.join(outdir, "test_rows.txt"), dtype=int)
    train = np.setdiff1d(np.arange(len(y)), test)
    k = len(set(y))
    _, cpred = memberships(os.path.join(outdir, "test.pred.csv"))
    _, call = memberships(os.path.join(outdir, "all.w.csv"))
    ari_pred = adjusted_rand_score(y[test], cpred)
    ari_all = adjusted_rand_score(y[test], call[test])
    mean, std = x[train].mean(axis=0), x[train].std(axis=0)
    std[std == 0] = 1
    xtr, xte = (x[train] - mean) / std, (x[test] - mean) / std
    t = time.process_time()
    km = KMeans(n_clusters=k, n_init=10, random_state=0).fit(xtr)
    ari_km = adjusted_rand_score(y[test], km.predict(xte))
    t_km = time.process_time() - t
    budget = int(os.environ.get("GMM_SECONDS", "600"))

    def alarm(*_):
        raise Timeout()

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(budget)
    t = time.time()
    try:
        gm = GaussianMixture(n_components=k, random_state=0).fit(xtr)
        gmm = f"{adjusted_rand_score(y[test], gm.predict(xte)):.4f}"
    except Timeout:
        gmm = f"not done in {budget} s"
    except Exception as e:  # a singular covariance, for example
        gmm = f"failed: {type(e).__name__}"
    signal.alarm(0)
    print(f"| {name} | {len(train)} | {len(test)} | {k} | {ari_pred:.4f} | {ari_all:.4f} | {ari_km:.4f} | {gmm} |")


def ari(test, predicted):
    _, _, y, _ = read_table(test)
    _, c = memberships(predicted)
    print(f"{adjusted_rand_score(y, c):.4f}")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    {"split": split, "reproduce": reproduce, "score": score, "ari": ari}[cmd](*args)


if __name__ == "__main__":
    main()
