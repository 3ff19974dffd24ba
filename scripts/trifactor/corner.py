#!/usr/bin/python3
"""Share of rows NOT stationary at their corner, at the one-hot k-means start of seed 0 with the
optimal s (trifactor: d_ia - (s_b/s_a) d_ib >= s_a n_a for all b), raw A and D^-1/2 A D^-1/2."""
import os, sys, numpy as np, scipy.sparse as sp
sys.argv = [sys.argv[0]]
from trifactor import load_graph, load_w0, solve_s
for name in open(os.path.join(os.environ.get('TRI', '/work/tmp-tri'), 'sets.txt')).read().split():
    if name == 'letter':
        continue
    W0 = load_w0(name); n, k = W0.shape
    A = load_graph(name, n)
    out = [name]
    for norm in (False, True):
        B = A
        if norm:
            d = np.asarray(A.sum(axis=1)).ravel(); Dm = sp.diags(1 / np.sqrt(d)); B = (Dm @ A @ Dm).tocsr()
        lab = W0.argmax(1); W = np.eye(k)[lab]
        AW = B @ W; C = W.T @ W; b = np.einsum('ij,ij->j', W, AW); s = solve_s(C, b)
        nj = C.diagonal()
        G = W @ (np.outer(s, s) * C) - AW * s
        own = G[np.arange(n), lab]
        bad = own > G.min(axis=1) + 1e-12 * np.abs(G).max()
        below = AW[np.arange(n), lab] < (s * nj)[lab]
        out.append(f"{bad.mean():.2f}/{below.mean():.2f}")
    print(' '.join(out))
