#!/usr/bin/python3
"""stability.py: the scale multiple F chosen by the stability of the solves
across k-means starts (issue 22; docs/quality.md, "Tried and rejected: the
multiple chosen by stability"). A prototype outside the product: it runs
the ssnmf binary only.

  stability.py collect -ssnmf BIN -data DIR[,DIR] -sets a,b [-starts 5]
      [-grid 1,1.5,2,3,4] > stability.jsonl
  stability.py report -records stability.jsonl[,more] -study study-a.jsonl,study-b.jsonl
      -anchors anchors.jsonl [-repeats 100] [-lso-seed 1]

collect solves every set, for every F of the grid and every start r < R,
with -starts 1 -seed s_r -scale c*F, where s_r is the seed of start r of a
run of R starts (kmeans.StartSeed(0, r), read off the summary of a run
with -max-iter 0) and c the sizes rule's factor of the run's seed 0, so
that every start solves the one P of "-starts R -scale sizes:F", as the
product does. (One difference: above 1,024 rows the bandwidth of the
k-means start's soft memberships is estimated on a sample drawn with the
run's seed, so starts r >= 1 begin from memberships a little softer or
harder than those of a run of R starts; report measures the effect on the
default's rule.) It writes one JSON line per set: every solve's objective
and ARI against the labels, the pairwise ARI of the solves' hard labels
(argmax of W's rows) at each F, and the ARI of each solve with its own
k-means start.

report reads those lines and scores the rule

  for each F of the grid, solve from the first R starts; stability(F) is
  the mean ARI over the R(R-1)/2 pairs of their hard labels; choose the F
  of the largest stability, exact ties to the F nearest the grid's middle,
  then the lower; answer the start of least objective at that F (ties to
  the lower start),

for the grids and R it is given, next to the default (-starts 2 -scale
sizes:2, read off the records of the starts study, starts10-sizes:2) and
each rule's k-means start (starts10-kmeans-start), then runs a
leave-sets-out study over those rules and the default (random halves,
the rule of the best in-sample mean picked, scored held out).
Needs NumPy (Debian's /usr/bin/python3 has it).
"""
import argparse, json, os, shutil, subprocess, tempfile
import numpy as np


def ari(a, b):
    """The adjusted Rand index of two labelings (1 for two one-cluster ones)."""
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    n = len(a)
    c = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(c, (a, b), 1)
    comb = lambda x: (x * (x - 1) / 2).sum()
    sab, sa, sb = comb(c), comb(c.sum(1)), comb(c.sum(0))
    exp = sa * sb / (n * (n - 1) / 2)
    mx = (sa + sb) / 2
    if mx == exp:
        return 1.0
    return float((sab - exp) / (mx - exp))


def collect(o):
    tmp = tempfile.mkdtemp(prefix="stability-")
    try:
        collect_in(o, tmp)
    finally:
        shutil.rmtree(tmp)


def collect_in(o, tmp):
    grid = [float(x) for x in o.grid.split(",")]

    def path(s):
        for d in o.data.split(","):
            p = os.path.join(d, s + ".csv")
            if os.path.exists(p):
                return p
        raise SystemExit("no %s.csv in %s" % (s, o.data))

    def solve(s, *args, out=None):
        summ = os.path.join(tmp, "s.json")
        cmd = [o.ssnmf, "solve", "-q", "-workers", "1", "-summary", summ, path(s)] + list(args)
        if out:
            cmd += ["-out", out]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(summ) as f:
            d = json.load(f)
        labels = None
        if out:
            labels = np.loadtxt(out, delimiter=",", skiprows=1, usecols=[d["k"] + 1]).astype(int)
        return d, labels

    for s in o.sets.split(","):
        w = os.path.join(tmp, "w.csv")
        d, _ = solve(s, "-seed", "0", "-starts", str(o.starts), "-max-iter", "0", "-scale", "sizes")
        c, seeds = d["scale"], [st["seed"] for st in d["starts"]]
        rec = {"set": s, "n": d["n"], "k": d["k"], "sizes_scale": c, "seeds": seeds,
               "kmeans_start": [st["ari"] for st in d["starts"]], "grid": grid, "F": {}}
        start_labels = [solve(s, "-seed", str(sd), "-starts", "1", "-max-iter", "0", out=w)[1] for sd in seeds]
        for f in grid:
            runs, labs = [], []
            for r, sd in enumerate(seeds):
                d, lab = solve(s, "-seed", str(sd), "-starts", "1", "-scale", repr(c * f), out=w)
                runs.append({"objective": d["objective"], "ari": d["ari"], "iterations": d["iterations"],
                             "solve_seconds": d["solve_seconds"], "to_start": ari(lab, start_labels[r])})
                labs.append(lab)
            pair = [[ari(a, b) for b in labs] for a in labs]
            rec["F"][repr(f)] = {"runs": runs, "pairwise": pair}
        print(json.dumps(rec), flush=True)


def read_lines(paths):
    for p in paths.split(","):
        with open(p) as f:
            for line in f:
                if line.strip():
                    yield json.loads(line)


def least(objs):
    """The index of the least objective, ties to the lower."""
    best = 0
    for i, x in enumerate(objs):
        if x < objs[best]:
            best = i
    return best


def stable_choice(rec, grid, R):
    """The F the stability rule chooses with grid and R starts, its start,
    and the stabilities."""
    stab = {}
    for f in grid:
        p = np.array(rec["F"][repr(f)]["pairwise"])[:R, :R]
        stab[f] = float(p[np.triu_indices(R, 1)].mean())
    mid = sorted(grid)[(len(grid) - 1) // 2]
    top = max(stab.values())
    cands = [f for f in grid if stab[f] == top]
    f = min(cands, key=lambda x: (abs(x - mid), x))
    runs = rec["F"][repr(f)]["runs"][:R]
    return f, least([r["objective"] for r in runs]), stab


def ranks(v):
    """The ranks of v, ties given their mean rank (for Spearman's rho)."""
    r = np.empty(len(v))
    for x in np.unique(v):
        r[v == x] = np.flatnonzero(np.sort(v) == x).mean()
    return r


def report(o):
    recs = {r["set"]: r for r in read_lines(o.records)}
    study = {}
    for r in read_lines(o.study):
        if not r.get("error"):
            study.setdefault(r["set"], {})[r["candidate"]] = r
    anchors = {}
    for a in read_lines(o.anchors):
        if not a.get("error"):
            anchors[(a["set"], a["method"])] = a["ARI"]
    names = sorted(recs, key=lambda s: recs[s]["n"])
    rules = []
    for g in o.grids.split(";"):
        for R in [int(x) for x in o.rs.split(",")]:
            rules.append((tuple(float(x) for x in g.split(",")), R))

    def default(s):
        st = study[s]["starts10-sizes:2"]["starts"][:2]
        i = least([x["objective"] for x in st])
        return st[i]["ari"], study[s]["starts10-kmeans-start"]["starts"][i]["ari"]

    def rule_ari(s, rule):
        grid, R = rule
        f, i, _ = stable_choice(recs[s], grid, R)
        return recs[s]["F"][repr(f)]["runs"][i]["ari"], recs[s]["kmeans_start"][i], f

    # The prototype's starts against the records: the default's rule read
    # off the prototype's runs at F = 2 with R = 2.
    diff = []
    for s in names:
        runs = recs[s]["F"]["2.0"]["runs"][:2]
        diff.append(abs(runs[least([r["objective"] for r in runs])]["ari"] - default(s)[0]))
    print("The default's rule read off the prototype's runs (F = 2, first 2 starts) against the records: "
          "equal ARI on %d of %d sets, largest difference %.4f.\n" % (sum(d < 1e-9 for d in diff), len(names), max(diff)))

    main = rules[0]
    print("Set by set: the stability rule (grid %s, R = %d), its F and the stabilities, against the default "
          "(-starts 2 -scale sizes:2) and the anchors.\n" % (",".join("%g" % x for x in main[0]), main[1]))
    print("| data | n | k | stability rule | F | its k-means start | stability at each F | default | its k-means start | KMeans | GMM |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    cols = {k: [] for k in ["rule", "rs", "def", "ds", "km", "gmm"]}
    for s in names:
        a, st, f = rule_ari(s, main)
        _, _, stab = stable_choice(recs[s], *main)
        da, ds = default(s)
        km, gm = anchors.get((s, "kmeans"), float("nan")), anchors.get((s, "gmm"), float("nan"))
        for k, v in zip(cols, [a, st, da, ds, km, gm]):
            cols[k].append(v)
        print("| %s | %d | %d | %.4f | %g | %.4f | %s | %.4f | %.4f | %.4f | %.4f |" % (
            s, recs[s]["n"], recs[s]["k"], a, f, st, " ".join("%.2f" % stab[x] for x in main[0]), da, ds, km, gm))
    m = {k: np.mean(v) for k, v in cols.items()}
    print("| mean | | | %.4f | | %.4f | | %.4f | %.4f | %.4f | %.4f |\n" % (m["rule"], m["rs"], m["def"], m["ds"], m["km"], m["gmm"]))
    nb = lambda a, b: sum(x >= y - 1e-12 for x, y in zip(a, b))
    print("Stability rule: mean %.4f (KMeans %+.4f, GMM %+.4f), at least its k-means start on %d of %d; "
          "default: mean %.4f (KMeans %+.4f, GMM %+.4f), at least its k-means start on %d of %d.\n" % (
              m["rule"], m["rule"] - m["km"], m["rule"] - m["gmm"], nb(cols["rule"], cols["rs"]), len(names),
              m["def"], m["def"] - m["km"], m["def"] - m["gmm"], nb(cols["def"], cols["ds"]), len(names)))

    # Every rule over all sets, and the leave-sets-out study among them and
    # the default.
    label = lambda r: "default" if r == "default" else "stability, grid {%s}, R = %d" % (",".join("%g" % x for x in r[0]), r[1])
    allr = rules + ["default"]
    score = {r: np.array([default(s)[0] if r == "default" else rule_ari(s, r)[0] for s in names]) for r in allr}
    start = {r: np.array([default(s)[1] if r == "default" else rule_ari(s, r)[1] for s in names]) for r in allr}
    rng = np.random.default_rng(o.lso_seed)
    half = len(names) // 2
    ins, held, picked = {r: [] for r in allr}, {r: [] for r in allr}, {r: 0 for r in allr}
    pick_in, pick_held = [], []
    for _ in range(o.repeats):
        perm = rng.permutation(len(names))
        tr, te = perm[:half], perm[half:]
        best = None
        for r in allr:
            ins[r].append(score[r][tr].mean())
            held[r].append(score[r][te].mean())
            if best is None or ins[r][-1] > ins[best][-1]:
                best = r
        picked[best] += 1
        pick_in.append(ins[best][-1])
        pick_held.append(held[best][-1])
    print("Leave-sets-out: %d repeats of random halves (%d in sample, %d held out), numpy seed %d.\n" % (
        o.repeats, half, len(names) - half, o.lso_seed))
    print("| rule | mean ARI, all sets | in sample | held out (sd, min to max) | picked | >= its k-means start |")
    print("| --- | ---: | ---: | --- | ---: | ---: |")
    for r in allr:
        h = np.array(held[r])
        print("| %s | %.4f | %.4f | %.4f (%.4f, %.4f to %.4f) | %d of %d | %d of %d |" % (
            label(r), score[r].mean(), np.mean(ins[r]), h.mean(), h.std(ddof=1), h.min(), h.max(),
            picked[r], o.repeats, nb(score[r], start[r]), len(names)))
    h = np.array(pick_held)
    print("| the pick of each repeat | | %.4f | %.4f (%.4f, %.4f to %.4f) | | |" % (
        np.mean(pick_in), h.mean(), h.std(ddof=1), h.min(), h.max()))
    print("\nChosen F over the sets: " + "; ".join(
        "%s: %s" % (label(r), " ".join("%g×%d" % (f, n) for f, n in sorted(
            {f: sum(rule_ari(s, r)[2] == f for s in names) for f in r[0]}.items()))) for r in rules))
    diagnostics(recs, names, main)


def diagnostics(recs, names, main):
    """What stability measures: per F of the main grid, the mean ARI of a
    fixed F (R = 2 and R), the mean stability, the mean ARI of a solve with
    its own k-means start; the best F per set read off the labels; the rank
    correlation of stability and ARI across F within a set; the solve time
    the rule would take."""
    grid, R = main

    def fixed(s, f, r):
        runs = recs[s]["F"][repr(f)]["runs"][:r]
        return runs[least([x["objective"] for x in runs])]["ari"]

    def stab(s, f):
        p = np.array(recs[s]["F"][repr(f)]["pairwise"])[:R, :R]
        return p[np.triu_indices(R, 1)].mean()

    print("\nPer F over the %d sets: the mean ARI of the fixed multiple (least objective of the first 2, and of the first %d starts), "
          "the mean stability (%d starts), the mean ARI of a solve with its own k-means start.\n" % (len(names), R, R))
    print("| F | mean ARI, 2 starts | mean ARI, %d starts | mean stability | mean ARI with its k-means start |" % R)
    print("| ---: | ---: | ---: | ---: | ---: |")
    for f in grid:
        print("| %g | %.4f | %.4f | %.3f | %.3f |" % (f, np.mean([fixed(s, f, 2) for s in names]), np.mean([fixed(s, f, R) for s in names]),
                                                  np.mean([stab(s, f) for s in names]),
                                                  np.mean([np.mean([x["to_start"] for x in recs[s]["F"][repr(f)]["runs"][:R]]) for s in names])))
    agree = {f: 0 for f in grid}
    mid = sorted(grid)[(len(grid) - 1) // 2]
    for s in names:
        a = {f: np.mean([x["to_start"] for x in recs[s]["F"][repr(f)]["runs"][:R]]) for f in grid}
        agree[min([f for f in grid if a[f] == max(a.values())], key=lambda x: (abs(x - mid), x))] += 1
    print("\nThe F of the largest mean ARI with the k-means starts (the same ties): %s." % " ".join("%g×%d" % kv for kv in agree.items()))
    print("The best F of each set read off the labels (%d starts): mean ARI %.4f." % (
        R, np.mean([max(fixed(s, f, R) for f in grid) for s in names])))
    rho = []
    for s in names:
        st = np.array([stab(s, f) for f in grid])
        a = np.array([np.mean([x["ari"] for x in recs[s]["F"][repr(f)]["runs"][:R]]) for f in grid])
        if st.std() > 1e-9 and a.std() > 1e-9:
            rho.append(np.corrcoef(ranks(st), ranks(a))[0, 1])
    print("Rank correlation across F, within a set, of stability and the mean ARI of the %d starts: mean %.3f over the %d sets "
          "where both vary, positive on %d." % (R, np.mean(rho), len(rho), sum(x > 0 for x in rho)))
    sec = {s: sum(x["solve_seconds"] for f in grid for x in recs[s]["F"][repr(f)]["runs"][:R]) for s in names}
    top = sorted(names, key=lambda s: -sec[s])[:3]
    print("Solve seconds of the rule's %d solves (one worker, as collected): %s; the sum over the sets %.1f." % (
        R * len(grid), ", ".join("%s %.1f" % (s, sec[s]) for s in top), sum(sec.values())))


ap = argparse.ArgumentParser()
sub = ap.add_subparsers(dest="cmd", required=True)
c = sub.add_parser("collect")
c.add_argument("-ssnmf", required=True)
c.add_argument("-data", required=True)
c.add_argument("-sets", required=True)
c.add_argument("-starts", type=int, default=5)
c.add_argument("-grid", default="1,1.5,2,3,4")
r = sub.add_parser("report")
r.add_argument("-records", required=True)
r.add_argument("-study", required=True)
r.add_argument("-anchors", required=True)
r.add_argument("-grids", default="1,1.5,2,3,4;1,2,3", help="semicolon-separated grids; the first with the first R is the main rule")
r.add_argument("-rs", default="5,3", help="comma-separated numbers of starts")
r.add_argument("-repeats", type=int, default=100)
r.add_argument("-lso-seed", type=int, default=1)
o = ap.parse_args()
collect(o) if o.cmd == "collect" else report(o)
