#!/usr/bin/python3
"""anchors.py: scikit-learn's clusterings of the quality study's data sets.

Usage: anchors.py [-timeout SECONDS] [-methods kmeans,gmm,spectral] CSV...

For each labelled CSV (a header row, numeric features, an integer column
"label"), with k = the number of classes and z-scored features (population
standard deviation, a constant feature becomes 0, as ssnmf's -standardize),
it runs

  kmeans    KMeans(n_clusters=k, n_init=10, random_state=0)
  gmm       GaussianMixture(n_components=k, random_state=0)
  spectral  SpectralClustering(n_clusters=k, affinity="nearest_neighbors",
            random_state=0)  (10 neighbours, scikit-learn's default)

each in a child process of its own, and prints one JSON object a line with
the set, the method, ARI, NMI, the seconds of the fit (reading and scaling
excluded) and the child's peak RSS in kB (Python and NumPy included). A fit that exceeds -timeout is
killed and reported with "error": "timeout". This is a comparison script:
ssnmf never calls Python. It needs Debian's python3-sklearn.
"""
import json
import os
import resource
import subprocess
import sys
import time

METHODS = ("kmeans", "gmm", "spectral")


def fit(path, method):
    import numpy as np
    from sklearn import cluster, metrics, mixture

    import gzip
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        header = f.readline().strip().split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    li = header.index("label")
    y = data[:, li].astype(int)
    x = np.delete(data, li, axis=1)
    sd = x.std(axis=0)
    x = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1)
    k = len(np.unique(y))
    begin = time.perf_counter()
    if method == "kmeans":
        pred = cluster.KMeans(n_clusters=k, n_init=10, random_state=0).fit_predict(x)
    elif method == "gmm":
        pred = mixture.GaussianMixture(n_components=k, random_state=0).fit(x).predict(x)
    else:
        pred = cluster.SpectralClustering(n_clusters=k, affinity="nearest_neighbors",
                                          random_state=0).fit_predict(x)
    seconds = time.perf_counter() - begin
    return {"ARI": metrics.adjusted_rand_score(y, pred),
            "NMI": metrics.normalized_mutual_info_score(y, pred),
            "seconds": seconds, "n": len(y), "k": k,
            "maxrss_kB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def main(argv):
    timeout, methods, paths = 3600.0, list(METHODS), []
    it = iter(argv)
    for a in it:
        if a == "-timeout":
            timeout = float(next(it))
        elif a == "-methods":
            methods = next(it).split(",")
        elif a == "-child":
            print(json.dumps(fit(next(it), next(it))))
            return 0
        else:
            paths.append(a)
    for m in methods:
        if m not in METHODS:
            print(f"anchors.py: unknown method {m!r}, want one of {','.join(METHODS)}", file=sys.stderr)
            return 2
    for path in paths:
        name = os.path.basename(path).split(".")[0]
        for m in methods:
            rec = {"set": name, "method": m}
            proc = subprocess.Popen([sys.executable, __file__, "-child", path, m],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                out, err = proc.communicate()
                rec["error"] = "timeout"
            if "error" not in rec:
                if proc.returncode != 0:
                    rec["error"] = (err.strip().splitlines() or ["exit %d" % proc.returncode])[-1]
                else:
                    rec.update(json.loads(out))
            print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
