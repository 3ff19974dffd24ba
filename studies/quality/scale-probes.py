#!/usr/bin/python3
"""scale-probes.py: one-start probes of scale rules that the starts study
(studies/quality -lso) does not run, and of the graph itself, each set
solved by ssnmf with -seed 0, -starts 1, -workers 1; one JSON line per set
on stdout (docs/quality.md, "Rules that were probed" and "Probed: the
losses are the graph's").

  scale-probes.py -ssnmf BIN -data DIR[,DIR] -sets a,b MODE

MODE is
  multiples   the ARI at F times the sizes rule's scale, F in 0.5 .. 4, and
              of the k-means start (-max-iter 0);
  refit       the sizes rule re-estimated from the solve: c_{t+1} =
              sum_j s_j^2 / sum(A), s_j the column sums of the W solved at
              c_t (a cold solve from the same k-means start), from c_0 the
              sizes rule, until c changes by less than 0.1% (at most 8);
  stationary  c = max_a n_a / median_{i in a} (d_ia - max_{b != a} d_ib),
              the k-means start's clusters a of sizes n_a and d_ia the
              graph's weight from row i into cluster a: the least scale at
              which half the rows of every cluster of the start are a
              first-order stationary point (c (d_ia - d_ib) >= n_a); and
              largest, c = n_max n / sum(A);
  rowsizes    the issue's per-row size scaling: every edge of the graph
              (ssnmf graph) times (n_a n_b)^(t/2), a and b the k-means
              start's clusters of its two rows and n their sizes, solved
              with the default's scale rule, for t = 0.5 and 1 (at t = 1 a
              row's stationarity, c (d_ia - d_ib) >= n_a, no longer depends
              on its cluster's size);
  criteria    two label-free measures of a partition of the graph A
              (ssnmf graph) that have no size term like the model's: the
              normalized cut, sum_a cut(a) / vol(a), and the modularity,
              sum_a in(a)/vol(A) - (vol(a)/vol(A))^2, of the k-means start's
              clusters, of the default's (-starts 1) and of the classes, with
              the ARIs.
Needs NumPy (Debian's /usr/bin/python3 has it).
"""
import argparse, csv, json, os, subprocess, tempfile
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("-ssnmf", required=True)
ap.add_argument("-data", required=True)
ap.add_argument("-sets", required=True)
ap.add_argument("mode", choices=["multiples", "refit", "stationary", "rowsizes", "criteria"])
o = ap.parse_args()
tmp = tempfile.mkdtemp(prefix="scale-probes-")


def path(s):
    for d in o.data.split(","):
        p = os.path.join(d, s + ".csv")
        if os.path.exists(p):
            return p
    raise SystemExit("no %s.csv in %s" % (s, o.data))


def solve(s, *args):
    summ = os.path.join(tmp, "s.json")
    subprocess.run([o.ssnmf, "solve", "-q", "-seed", "0", "-workers", "1", "-starts", "1", "-summary", summ, path(s)] + list(args),
                   check=True, stdout=subprocess.DEVNULL)
    with open(summ) as f:
        return json.load(f)


def start_labels(s):
    """The k-means start's hard clusters (-max-iter 0), k and its ARI."""
    out = os.path.join(tmp, "w.csv")
    d = solve(s, "-max-iter", "0", "-out", out)
    k = d["k"]
    return np.loadtxt(out, delimiter=",", skiprows=1, usecols=[k + 1]).astype(int), k, d["ari"]


def classes(s):
    """The label column as class numbers 0, 1, ..."""
    with open(path(s), newline="") as f:
        r = csv.reader(f)
        li = next(r).index("label")
        return np.unique([row[li] for row in r], return_inverse=True)[1]


def graph(s):
    """The graph's edges (ssnmf graph): src <= dst, each pair once, and the weights."""
    edges = os.path.join(tmp, "g.csv")
    subprocess.run([o.ssnmf, "graph", "-q", "-o", edges, path(s)], check=True)
    e = np.loadtxt(edges, delimiter=",", skiprows=1)
    return e[:, 0].astype(int), e[:, 1].astype(int), e[:, 2]


for s in o.sets.split(","):
    rec = {"set": s}
    if o.mode == "rowsizes":
        lab, k, start_ari = start_labels(s)
        src, dst, w = graph(s)
        n = np.bincount(lab, minlength=k).astype(float)
        edges = os.path.join(tmp, "gs.csv")
        rec.update(kmeans_start=start_ari, default=solve(s)["ari"])
        for t in [0.5, 1]:
            np.savetxt(edges, np.c_[src, dst, w * (n[lab[src]] * n[lab[dst]]) ** (t / 2)], delimiter=",",
                       header="src,dst,weight", comments="", fmt=["%d", "%d", "%.17g"])
            rec["t%g" % t] = solve(s, "-affinity", edges)["ari"]
    elif o.mode == "criteria":
        lab, k, start_ari = start_labels(s)
        out = os.path.join(tmp, "w.csv")
        d = solve(s, "-out", out)
        sol = np.loadtxt(out, delimiter=",", skiprows=1, usecols=[k + 1]).astype(int)
        src, dst, w = graph(s)
        rec.update(kmeans_start=start_ari, default=d["ari"])
        off = src != dst  # a pair's weight is in two rows of A, a self-loop's in one
        for name, c in [("start", lab), ("default", sol), ("labels", classes(s))]:
            k = c.max() + 1
            vol = np.bincount(c[src], w, k) + np.bincount(c[dst][off], w[off], k)
            same = c[src] == c[dst]
            inside = np.bincount(c[src][same], w[same] * (1 + off[same]), k)
            rec[name + "_ncut"] = float(np.sum((vol - inside)[vol > 0] / vol[vol > 0]))
            rec[name + "_modularity"] = float(np.sum(inside / vol.sum() - (vol / vol.sum()) ** 2))
    elif o.mode == "multiples":
        c = solve(s, "-scale", "sizes")["scale"]
        rec.update(scale=c, kmeans_start=solve(s, "-max-iter", "0")["ari"])
        for f in [0.5, 1, 1.5, 2, 3, 4]:
            rec["x%g" % f] = solve(s, "-scale", repr(c * f))["ari"]
    elif o.mode == "refit":
        lab, k, _ = start_labels(s)
        out = os.path.join(tmp, "w.csv")
        d = solve(s, "-scale", "sizes", "-out", out)
        c = d["scale"]
        sum_a = float((np.bincount(lab, minlength=k) ** 2).sum()) / c
        c0, aris = c, [d["ari"]]
        for _ in range(8):
            w = np.loadtxt(out, delimiter=",", skiprows=1, usecols=range(1, k + 1))
            cn = float((w.sum(axis=0) ** 2).sum()) / sum_a
            if abs(cn / c - 1) < 1e-3:
                break
            c = cn
            aris.append(solve(s, "-scale", repr(c), "-out", out)["ari"])
        rec.update(sizes=aris[0], refit=aris[-1], rounds=len(aris) - 1, ratio=c / c0)
    else:
        lab, k, _ = start_labels(s)
        src, dst, w = graph(s)
        n = len(lab)
        d = np.zeros((n, k))  # d[i, a]: weight from row i into cluster a
        np.add.at(d, (src, lab[dst]), w)
        off = src != dst
        np.add.at(d, (dst[off], lab[src[off]]), w[off])
        sizes = np.bincount(lab, minlength=k)
        sum_a = d.sum()
        own = d[np.arange(n), lab]
        other = d.copy()
        other[np.arange(n), lab] = -np.inf
        margin = own - other.max(axis=1)
        cs = [sizes[a] / m for a in range(k) if sizes[a] and (m := np.median(margin[lab == a])) > 0]
        sizes_c = float((sizes ** 2).sum()) / sum_a
        stat = max(cs) if cs else sizes_c
        largest = float(sizes.max()) * n / sum_a
        rec.update(sizes_scale=sizes_c, stationary_ratio=stat / sizes_c, largest_ratio=largest / sizes_c,
                   stationary=solve(s, "-scale", repr(stat))["ari"], largest=solve(s, "-scale", repr(largest))["ari"])
    print(json.dumps(rec), flush=True)
