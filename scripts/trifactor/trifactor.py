#!/usr/bin/python3
"""Per-cluster-scale simplicial symmetric NMF prototype (issue 22).

minimize f(W, s) = 1/4 ||A - W diag(s) W^T||_F^2, rows of W on the simplex, s >= 0.

Alternation, every iteration:
  (1) s <- argmin_{s>=0} f(W, s): M s = b with M = (W^T W)∘(W^T W), b = diag(W^T A W), NNLS.
  (2) one projected-gradient step on W for fixed s, Armijo backtracking (step grows
      1.5x after an accepted step, halves on a rejected one), so f never increases.
Stop: relative Frank-Wolfe gap  sum_i (g_i.w_i - min_j g_ij) / (1/4 ||W S W^T||^2) < mtol,
or max_iter. Per iteration: one A·W product per trial step (O(nnz k)) and O(n k^2).

Usage: trifactor.py [--norm] [--onehot] [--accel] [--oracle] [--mtol 1e-3] [--max-iter 3000] SET... > out.jsonl
Needs $TRI/g/SET.csv (ssnmf graph) and $TRI/w0/SET.csv (ssnmf solve -max-iter 0); TRI defaults
to /work/tmp-tri. scripts/trifactor/run.sh makes them and runs every setting.
"""
import argparse, json, os, sys, time
import numpy as np
import scipy.sparse as sp
from scipy.optimize import nnls
from sklearn.metrics import adjusted_rand_score

TRI = os.environ.get('TRI', '/work/tmp-tri')
DATA = ['/work/tmp-quality22/pub', '/work/shared/data']


def load_labels(name):
    for d in DATA:
        p = os.path.join(d, name + '.csv')
        if os.path.exists(p):
            import csv
            with open(p) as f:
                r = csv.reader(f)
                h = next(r)
                li = h.index('label')
                return np.array([row[li] for row in r])
    raise FileNotFoundError(name)


def read_runs(paths):
    """The records of the r-NAME.jsonl files at paths: a list of (NAME, {set: record})."""
    runs = []
    for p in paths:
        with open(p) as f:
            runs.append((os.path.basename(p)[2:-6], {r['set']: r for r in map(json.loads, f)}))
    return runs


def load_graph(name, n):
    e = np.loadtxt(os.path.join(TRI, 'g', name + '.csv'), delimiter=',', skiprows=1)
    src, dst, w = e[:, 0].astype(np.int64), e[:, 1].astype(np.int64), e[:, 2]
    off = src != dst
    r = np.concatenate([src, dst[off]])
    c = np.concatenate([dst, src[off]])
    v = np.concatenate([w, w[off]])
    return sp.csr_matrix((v, (r, c)), shape=(n, n))


def load_w0(name, sub='w0'):
    import csv
    with open(os.path.join(TRI, sub, name + '.csv')) as f:
        r = csv.reader(f)
        h = next(r)
        cols = [i for i, x in enumerate(h) if x.startswith('w') and x[1:].isdigit()]
        rows = [[float(row[i]) for i in cols] for row in r]
    return np.array(rows)


def proj_simplex(V):
    """Euclidean projection of each row of V onto the probability simplex."""
    n, k = V.shape
    U = -np.sort(-V, axis=1)
    css = np.cumsum(U, axis=1) - 1.0
    ind = np.arange(1, k + 1)
    cond = U - css / ind > 0
    rho = k - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = css[np.arange(n), rho] / (rho + 1)
    return np.maximum(V - theta[:, None], 0.0)


def solve_s(C, b):
    M = C * C
    k = len(b)
    M = M + 1e-12 * np.trace(M) / k * np.eye(k)
    L = np.linalg.cholesky(M)
    y = np.linalg.solve(L, b)
    s, _ = nnls(L.T, y)
    return s


def objective(normA2, AW, W, s):
    C = W.T @ W
    b = np.einsum('ij,ij->j', W, AW)
    return 0.25 * (normA2 - 2 * s @ b + s @ ((C * C) @ s)), C, b


def fval(normA2, s, C, b):
    return 0.25 * (normA2 - 2 * s @ b + s @ ((C * C) @ s))


def run(A, W, mtol, max_iter, accel=False, trace=None):
    """Alternate the exact s and projected-gradient W steps from W; see the module doc.

    accel: the W step is taken from an extrapolated point Y = W + beta (W - W_prev) (FISTA
    momentum); it is kept only if it does not increase f, else the momentum restarts and the
    step is taken from W, so f stays monotone either way.
    """
    normA2 = float(A.multiply(A).sum())
    AW = A @ W
    C = W.T @ W
    b = np.einsum('ij,ij->j', W, AW)
    s = solve_s(C, b)
    f = fval(normA2, s, C, b)
    t = None
    it, products, rel = 0, 1, float('inf')
    increases = 0
    W_prev, AW_prev, theta = W, AW, 1.0
    while it < max_iter:
        # (1) s for W
        s = solve_s(C, b)
        f_s = fval(normA2, s, C, b)
        if f_s > f * (1 + 1e-12):
            increases += 1
        f = f_s
        # gradient and relative FW gap at W
        SCS = np.outer(s, s) * C
        G = W @ SCS - AW * s
        gap = float(np.sum(np.einsum('ij,ij->i', G, W) - G.min(axis=1)))
        model = 0.25 * float(s @ ((C * C) @ s))
        rel = gap / model if model > 0 else float('inf')
        if trace is not None:
            trace.append((it, f, rel))
        if rel < mtol:
            break
        if t is None:
            L = float(np.linalg.norm(SCS, 2)) + float(np.max(s)) * float(abs(A).sum(axis=1).max())
            t = 1.0 / L
        # (2) W step from Y (= W without momentum)
        beta = 0.0
        if accel:
            theta_n = (1 + np.sqrt(1 + 4 * theta * theta)) / 2
            beta = (theta - 1) / theta_n
            theta = theta_n
        for attempt in (0, 1):
            if beta > 0:
                Y = W + beta * (W - W_prev)
                Y = proj_simplex(Y)
                AY = A @ Y
                products += 1
                CY = Y.T @ Y
                fY = fval(normA2, s, CY, np.einsum('ij,ij->j', Y, AY))
                GY = Y @ (np.outer(s, s) * CY) - AY * s
            else:
                Y, fY, GY = W, f, G
            while True:
                Wn = proj_simplex(Y - t * GY)
                D = Wn - Y
                AWn = A @ Wn
                products += 1
                Cn = Wn.T @ Wn
                bn = np.einsum('ij,ij->j', Wn, AWn)
                fn = fval(normA2, s, Cn, bn)
                if fn <= fY + float(np.sum(GY * D)) + 0.5 / t * float(np.sum(D * D)) or t < 1e-30:
                    break
                t *= 0.5
            if fn <= f or beta == 0:
                break
            beta, theta = 0.0, 1.0  # restart the momentum
        if fn > f * (1 + 1e-12):
            increases += 1
        W_prev = W
        W, AW, C, b, f = Wn, AWn, Cn, bn, fn
        t *= 1.5
        it += 1
    return W, s, dict(iterations=it, products=products, rel_gap=rel, objective=f,
                      increases=increases)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--norm', action='store_true', help='use D^-1/2 A D^-1/2')
    ap.add_argument('--onehot', action='store_true', help='start from the one-hot k-means labels')
    ap.add_argument('--oracle', action='store_true',
                    help='diagnostic only: start from the one-hot TRUE labels (not a method)')
    ap.add_argument('--mtol', type=float, default=1e-3)
    ap.add_argument('--max-iter', type=int, default=3000)
    ap.add_argument('--w0', default='w0', help='the folder under $TRI of the starts (w0: seed 0)')
    ap.add_argument('--accel', action='store_true', help='FISTA momentum with restart (monotone)')
    ap.add_argument('sets', nargs='+')
    a = ap.parse_args()
    for name in a.sets:
        y = load_labels(name)
        W0 = load_w0(name, a.w0)
        n, k = W0.shape
        A = load_graph(name, n)
        if a.norm:
            d = np.asarray(A.sum(axis=1)).ravel()
            Dm = sp.diags(1 / np.sqrt(d))
            A = (Dm @ A @ Dm).tocsr()
        lab0 = W0.argmax(axis=1)
        if a.onehot:
            W0 = np.eye(k)[lab0]
        if a.oracle:
            W0 = np.eye(k)[np.unique(y, return_inverse=True)[1]]
        t0 = time.process_time()
        W, s, info = run(A, W0, a.mtol, a.max_iter, accel=a.accel)
        secs = time.process_time() - t0
        lab = W.argmax(axis=1)
        _, _, f0 = run(A, W0, 0, 0)
        rec = dict(set=name, n=n, k=k, start=a.w0, norm=a.norm, accel=a.accel, onehot=a.onehot, oracle=a.oracle, mtol=a.mtol,
                   objective_start=f0['objective'], mean_max_membership=float(W.max(axis=1).mean()),
                   ari_start=adjusted_rand_score(y, lab0), ari=adjusted_rand_score(y, lab),
                   cpu_seconds=secs, s=s.tolist(), sizes=np.bincount(lab, minlength=k).tolist(),
                   nnz=A.nnz, **info)
        print(json.dumps(rec), flush=True)


if __name__ == '__main__':
    main()
