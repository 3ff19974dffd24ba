#!/usr/bin/python3
"""Checks trifactor.py against a dense reference on a small random case: the objective's
expansion, the gradient (finite differences), the NNLS s (KKT), and monotone descent."""
import sys, numpy as np, scipy.sparse as sp
sys.argv = [sys.argv[0]]
from trifactor import fval, solve_s, run, proj_simplex
rng = np.random.default_rng(1)
n, k = 40, 4
A = rng.random((n, n)); A = (A + A.T) / 2; A[A < 0.6] = 0
W = proj_simplex(rng.random((n, k))); s = rng.random(k)
f_dense = 0.25 * np.sum((A - W @ np.diag(s) @ W.T) ** 2)
C = W.T @ W; b = np.einsum('ij,ij->j', W, A @ W)
assert abs(fval(np.sum(A * A), s, C, b) - f_dense) < 1e-9 * f_dense, 'objective'
G = W @ (np.outer(s, s) * C) - (A @ W) * s
E = np.zeros_like(W); E[3, 2] = 1e-6
fd = (0.25 * np.sum((A - (W + E) @ np.diag(s) @ (W + E).T) ** 2) - 0.25 * np.sum((A - (W - E) @ np.diag(s) @ (W - E).T) ** 2)) / 2e-6
assert abs(fd - G[3, 2]) < 1e-5 * max(1, abs(fd)), ('gradient', fd, G[3, 2])
so = solve_s(C, b); gs = (C * C) @ so - b  # gradient of 2f in s, up to the factor
assert np.all(so >= 0) and np.all(gs >= -1e-8 * np.abs(b).max()) and abs(so @ gs) < 1e-8 * np.abs(b).max() * so.sum(), 'KKT'
trace = []
Wf, sf, info = run(sp.csr_matrix(A), W, 1e-6, 500, accel=True, trace=trace)
fs = [t[1] for t in trace]
assert all(b2 <= a2 * (1 + 1e-12) for a2, b2 in zip(fs, fs[1:])) and info['increases'] == 0, 'monotone'
assert np.allclose(Wf.sum(1), 1) and Wf.min() >= 0, 'simplex'
print('ok: objective, gradient, NNLS KKT, monotone descent (%d iterations, f %.6g -> %.6g)' % (len(fs), fs[0], fs[-1]))
