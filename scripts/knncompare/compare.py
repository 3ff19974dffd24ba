#!/usr/bin/python3
"""compare.py: ssnmf's kNN graph against pynndescent, hnswlib and faiss.

Usage: compare.py [-ssnmf BIN] [-m 30] [-threads 2] [-sample 1000] [-seed 0]
                  [-builders ssnmf,pynndescent,hnswlib,faiss] [-ssnmf-args ARGS]
                  [-hnsw-ef-construction 100] [-hnsw-m 16] [-hnsw-ef 60] DATA

DATA is a CSV file with a header (.csv, .csv.gz) or, with pyarrow, a Parquet
file; every column but "label" is a feature. The features are z-scored as
ssnmf's -standardize does, and each builder finds the M nearest rows of every
row, the row itself included (ssnmf's -neighbors M), in a child process with
GOMAXPROCS, OMP_NUM_THREADS and the like set to THREADS:

  ssnmf        BIN graph -neighbors M -workers THREADS -o EDGES DATA ARGS
               (EDGES: Parquet with pyarrow, else CSV); without -ssnmf, BIN
               is built from this tree with a plain go build (its kernels
               are chosen at run time; -ssnmf-args "-kernel avx2" forces one).
               ssnmf-exact adds -knn exact, if BIN graph has -knn.
  pynndescent  NNDescent(X, n_neighbors=M, n_jobs=THREADS, random_state=SEED),
               after a warm-up on a few rows (Numba's JIT).
  hnswlib      Index("l2"), init_index(ef_construction, M), set_ef(ef),
               knn_query(X, k=M), from the -hnsw-* flags.
  faiss        IndexHNSWFlat(p, 32), efSearch 64, search(X, M).

The peers get the z-scored float32 matrix; "seconds" is their build alone,
and the whole graph process for ssnmf, reading DATA and writing the edge
list included; "own" is ssnmf's own time for the graph, from the input
read to the graph built (standardizing, the search and the assembly).
"RSS" is the child's peak resident set (Linux counts the parent's at fork
in it, so the parent stays small). "ratio" is the builder's time (own
for ssnmf, seconds for the peers) over the seconds of the faster of
pynndescent and hnswlib. Recall is measured on -sample rows drawn
with -seed: row j is a hit of sample row i if it is at most as far from i as
i's M-th nearest row by a brute-force search in float64 (so ties count).
"directed" scores the builder's lists (n/a for ssnmf's symmetric edge list),
"graph" the M nearest of i's list and every row whose list holds i (for
ssnmf, i's neighbours in the edge list); both are hits over M·sample. One
JSON object a line per builder follows the table; temporary files go to
$TMPDIR. This is a comparison script: ssnmf never calls Python. It needs
Debian's python3-numpy; a builder whose python3-pynndescent, python3-hnswlib
or python3-faiss is absent is skipped.
"""
import importlib.util
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

import numpy as np

BUILDERS = ("ssnmf", "ssnmf-exact", "pynndescent", "hnswlib", "faiss")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEP = 1 << 20  # rows of a chunk when scanning lists or edges


def have(module):
    """Reports whether module can be imported."""
    return importlib.util.find_spec(module) is not None


def read_features(path):
    """Returns the features of a CSV or Parquet file as an n×p float64 array."""
    if path.endswith(".parquet"):
        if not have("pyarrow"):
            sys.exit("reading Parquet needs pyarrow, which is absent: give a CSV")
        import pyarrow.parquet as pq
        table = pq.read_table(path)
        return np.column_stack([table.column(c).to_numpy().astype(np.float64)
                                for c in table.column_names if c != "label"])
    import gzip
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        header = f.readline().strip().split(",")
    cols = [q for q, c in enumerate(header) if c != "label"]
    return np.loadtxt(path, delimiter=",", skiprows=1, usecols=cols, ndmin=2)


def standardize(x):
    """Z-scores the columns of x as ssnmf's tile.Standardize does."""
    mean, sd = x.mean(axis=0), x.std(axis=0)
    ok = (sd > 0) & (sd > 1e-12 * np.abs(mean))
    return np.where(ok, (x - mean) / np.where(ok, sd, 1), 0.0)


def exact_thresholds(x, rows, m):
    """Returns the squared distance of each sample row to its M-th nearest
    row (itself included), by a chunked brute-force search in float64."""
    xs, sq = x[rows], np.einsum("ij,ij->i", x, x)
    best_d, best_i = np.empty((len(rows), 0)), np.empty((len(rows), 0), dtype=np.int64)
    block = max(m, (1 << 24) // len(rows))
    for b0 in range(0, len(x), block):
        xb = x[b0:b0 + block]
        d = np.concatenate([best_d, sq[rows, None] + sq[None, b0:b0 + len(xb)] - 2 * xs @ xb.T], axis=1)
        ids = np.concatenate([best_i, np.broadcast_to(np.arange(b0, b0 + len(xb)), (len(rows), len(xb)))], axis=1)
        keep = np.argpartition(d, min(m, d.shape[1]) - 1, axis=1)[:, :m]
        best_d, best_i = np.take_along_axis(d, keep, 1), np.take_along_axis(ids, keep, 1)
    return ((x[best_i] - xs[:, None, :]) ** 2).sum(axis=2).max(axis=1)


def prepare(cfg):
    """Child: reads and z-scores DATA, saves it in float32 (for the peers)
    and float64, draws the sample rows and saves their thresholds."""
    x = standardize(read_features(cfg["data"]))
    np.save(cfg["x32"], x.astype(np.float32))
    np.save(cfg["x64"], x)
    rows = np.sort(np.random.default_rng(cfg["seed"]).choice(len(x), min(cfg["sample"], len(x)), replace=False))
    np.save(cfg["rows"], rows)
    np.save(cfg["thr"], exact_thresholds(x, rows, cfg["m"]))
    return {"n": x.shape[0], "p": x.shape[1]}


def build(cfg):
    """Child: builds one peer's lists, saves them as an n×M int64 array and
    returns the seconds of the build."""
    x = np.load(cfg["x32"])
    m, threads, seed, b = cfg["m"], cfg["threads"], cfg["seed"], cfg["builder"]
    if b == "pynndescent":
        from pynndescent import NNDescent
        NNDescent(x[:10 * m], n_neighbors=min(m, len(x) - 1), n_jobs=threads, random_state=seed)
    begin = time.perf_counter()
    if b == "pynndescent":
        ids = NNDescent(x, n_neighbors=m, n_jobs=threads, random_state=seed).neighbor_graph[0]
    elif b == "hnswlib":
        import hnswlib
        index = hnswlib.Index(space="l2", dim=x.shape[1])
        index.init_index(max_elements=len(x), ef_construction=cfg["hnsw-ef-construction"], M=cfg["hnsw-m"],
                         random_seed=seed)
        index.set_num_threads(threads)
        index.add_items(x)
        index.set_ef(cfg["hnsw-ef"])
        ids = index.knn_query(x, k=m)[0]
    else:
        import faiss
        faiss.omp_set_num_threads(threads)
        index = faiss.IndexHNSWFlat(x.shape[1], 32)
        index.add(x)
        index.hnsw.efSearch = 64
        ids = index.search(x, m)[1]
    seconds = time.perf_counter() - begin
    np.save(cfg["out"], np.asarray(ids, dtype=np.int64))
    return {"seconds": seconds}


def run(cmd, env, errpath):
    """Runs cmd, its stderr to errpath, and returns its stdout, wall seconds
    and peak RSS in kB; raises RuntimeError with its last stderr line if it fails."""
    begin = time.perf_counter()
    with open(errpath, "w") as err, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env,
                                                     text=True) as proc:
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        seconds, proc.returncode = time.perf_counter() - begin, os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        with open(errpath) as f:
            raise RuntimeError((f.read().strip().splitlines() or [f"exit {proc.returncode}"])[-1])
    return out, seconds, usage.ru_maxrss


def child(mode, cfg, env, tmp):
    """Runs prepare or build in a child process and returns its JSON result."""
    out, _, rss = run([sys.executable, __file__, mode, json.dumps(cfg)], env, os.path.join(tmp, "err"))
    return dict(json.loads(out), maxrss_kB=rss)


def recall(x, rows, thr, cands, m):
    """Returns the recall@M of candidate lists: for each sample row, its M
    nearest candidates (by exact distance) at most thr away, over M·rows."""
    hits = 0
    for k, c in enumerate(cands):
        c = np.unique(c[c >= 0])
        d = ((x[c] - x[rows[k]]) ** 2).sum(axis=1)
        hits += np.count_nonzero(np.sort(d)[:m] <= thr[k])
    return hits / (m * len(rows))


def group(pairs, base):
    """Returns base (one array per sample row) extended by the rows of pairs,
    (sample position, row) arrays, of each sample row."""
    pos = np.concatenate([p for p, _ in pairs] + [np.empty(0, np.int64)])
    row = np.concatenate([r for _, r in pairs] + [np.empty(0, np.int64)])
    order = np.argsort(pos, kind="stable")
    split = np.searchsorted(pos[order], np.arange(len(base) + 1))
    return [np.concatenate([b, row[order[split[k]:split[k + 1]]]]) for k, b in enumerate(base)]


def list_pairs(ids, pos):
    """Yields (sample position, row) for every row whose list holds a sample row."""
    for r0 in range(0, len(ids), STEP):
        chunk = np.asarray(ids[r0:r0 + STEP])
        r, c = np.nonzero((chunk >= 0) & (pos[np.maximum(chunk, 0)] >= 0))
        yield pos[chunk[r, c]], r0 + r


def edge_pairs(path, pos):
    """Yields (sample position, neighbour) for each edge of an ssnmf edge list
    (Parquet or CSV) with an end in the sample, in both directions."""
    def chunks():
        if path.endswith(".parquet"):
            import pyarrow.parquet as pq
            for b in pq.ParquetFile(path).iter_batches(STEP, columns=["src", "dst"]):
                yield b.column(0).to_numpy(), b.column(1).to_numpy()
            return
        with open(path) as f:
            f.readline()
            while lines := list(itertools.islice(f, STEP)):
                a = np.loadtxt(lines, delimiter=",", usecols=(0, 1), dtype=np.int64, ndmin=2)
                yield a[:, 0], a[:, 1]
    for src, dst in chunks():
        for s, d in ((src, dst), (dst, src)):
            hit = pos[s] >= 0
            yield pos[s[hit]], d[hit]


def score(files, rows, thr, pos, m, rec, out):
    """Scores a builder's output, a peer's lists (files["out"]) or ssnmf's
    edge list, into rec and removes it. The matrix and the lists are
    memory-mapped only meanwhile, so the parent stays small between builders."""
    x = np.load(files["x64"], mmap_mode="r")
    if out == files["out"]:
        ids = np.load(out, mmap_mode="r")
        rec["recall_directed"] = recall(x, rows, thr, ids[rows], m)
        cands = group(list(list_pairs(ids, pos)), list(ids[rows]))
    else:
        cands = group(list(edge_pairs(out, pos)), [np.empty(0, np.int64)] * len(rows))
    rec["recall_graph"] = recall(x, rows, thr, cands, m)
    os.remove(out)


def run_ssnmf(b, binary, opt, env, tmp, rec):
    """Runs BIN graph (plus -knn exact for ssnmf-exact, if BIN has -knn) and
    returns the path of its edge list."""
    args = shlex.split(opt["ssnmf-args"])
    if b == "ssnmf-exact":
        usage = subprocess.run([binary, "graph", "-h"], capture_output=True, text=True)
        if re.search(r"^\s*-knn\b", usage.stdout + usage.stderr, re.M):
            args += ["-knn", "exact"]
        else:
            print(f"{b}: {binary} graph has no -knn: its search is exact", file=sys.stderr)
    edges = os.path.join(tmp, "edges." + ("parquet" if have("pyarrow") else "csv"))
    cmd = [binary, "graph", "-neighbors", str(opt["m"]), "-workers", str(opt["threads"]), "-o", edges, opt["data"]]
    _, rec["seconds"], rec["maxrss_kB"] = run(cmd + args, env, os.path.join(tmp, "err"))
    with open(os.path.join(tmp, "err")) as f:
        own = re.findall(r"the graph ([0-9.]+)s", f.read())
    rec.update(binary=binary, args=" ".join(args), recall_directed=None,
               own_seconds=float(own[-1]) if own else None)
    return edges


def build_ssnmf(tmp):
    """Builds ./cmd/ssnmf of this tree in tmp with a plain go build, as a
    user does, and returns the binary's path."""
    out = os.path.join(tmp, "ssnmf")
    r = subprocess.run(["go", "build", "-o", out, "./cmd/ssnmf"], cwd=REPO, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("go build: " + (r.stderr.strip().splitlines() or ["failed"])[-1])
    return out


def print_results(results):
    """Prints the table, with the ratio to the faster of pynndescent and
    hnswlib, and one JSON object a line per builder."""
    peers = [r["seconds"] for r in results if r["builder"] in ("pynndescent", "hnswlib") and "error" not in r]
    fmt = "{:<12} {:>9} {:>7} {:>9} {:>7} {:>7} {:>6}"
    print(fmt.format("builder", "seconds", "own", "directed", "graph", "RSS MB", "ratio"))
    for r in results:
        if "error" in r:
            print(f"{r['builder']:<12} {r['error']}")
            continue
        r["ratio"] = (r.get("own_seconds") or r["seconds"]) / min(peers) if peers else None
        cells = [(r["seconds"], ".2f"), (r.get("own_seconds"), ".2f"), (r["recall_directed"], ".4f"),
                 (r["recall_graph"], ".4f"), (r["maxrss_kB"] / 1024, ".0f"), (r["ratio"], ".2f")]
        print(fmt.format(r["builder"], *("n/a" if v is None else format(v, f) for v, f in cells)))
    for r in results:
        print(json.dumps(r))


def main(argv):
    """Parses the flags, runs the builders, scores them and prints the results."""
    opt = {"ssnmf": "", "m": 30, "threads": 2, "sample": 1000, "seed": 0,
           "builders": "ssnmf,pynndescent,hnswlib,faiss", "ssnmf-args": "",
           "hnsw-ef-construction": 100, "hnsw-m": 16, "hnsw-ef": 60}
    paths, it = [], iter(argv)
    for a in it:
        if a in ("-prepare", "-build"):
            print(json.dumps((prepare if a == "-prepare" else build)(json.loads(next(it)))))
            return 0
        if a.startswith("-") and a[1:] in opt:
            opt[a[1:]] = type(opt[a[1:]])(next(it))
        else:
            paths.append(a)
    builders = opt["builders"].split(",")
    if len(paths) != 1 or not set(builders) <= set(BUILDERS):
        print(f"compare.py: want one DATA file and builders among {','.join(BUILDERS)}; "
              "see the usage at the top of compare.py", file=sys.stderr)
        return 2
    opt["data"], m, threads = paths[0], opt["m"], opt["threads"]
    env = dict(os.environ, **{v: str(threads) for v in
               ("GOMAXPROCS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")})
    name, results = os.path.basename(opt["data"]).split(".")[0], []
    with tempfile.TemporaryDirectory(prefix="knncompare.") as tmp:
        files = {f: os.path.join(tmp, f + ".npy") for f in ("x32", "x64", "rows", "thr", "out")}
        cfg = dict(opt, **files)
        try:
            shape = child("-prepare", cfg, os.environ, tmp)
        except RuntimeError as e:
            print(f"compare.py: {e}", file=sys.stderr)
            return 1
        rows, thr = np.load(files["rows"]), np.load(files["thr"])
        pos = np.full(shape["n"], -1, dtype=np.int64)
        pos[rows] = np.arange(len(rows))
        print(f"# {name}: n={shape['n']} p={shape['p']} M={m} threads={threads} sample={len(rows)} "
              f"seed={opt['seed']}", flush=True)
        binary = opt["ssnmf"]
        for b in builders:
            rec = {"set": name, "builder": b, "n": shape["n"], "p": shape["p"], "m": m, "threads": threads}
            results.append(rec)
            try:
                if b.startswith("ssnmf"):
                    binary = binary or build_ssnmf(tmp)
                    score(files, rows, thr, pos, m, rec, run_ssnmf(b, binary, opt, env, tmp, rec))
                elif not have(b):
                    raise RuntimeError(f"skipped: no module {b}")
                else:
                    rec.update(child("-build", dict(cfg, builder=b), env, tmp))
                    score(files, rows, thr, pos, m, rec, files["out"])
            except RuntimeError as e:
                rec["error"] = str(e)
                print(f"{b}: {e}", file=sys.stderr, flush=True)
    print_results(results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
