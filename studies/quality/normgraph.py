#!/usr/bin/python3
"""Writes $TRI/gn/SET.csv, the edge list of D^-1/2 A D^-1/2 for $TRI/g/SET.csv (the control:
the product's scalar-scale model on the degree-normalised graph)."""
import os, sys
import numpy as np
TRI = os.environ.get('TRI', '/work/tmp-tri')
os.makedirs(os.path.join(TRI, 'gn'), exist_ok=True)
for s in sys.argv[1:]:
    e = np.loadtxt(os.path.join(TRI, 'g', s + '.csv'), delimiter=',', skiprows=1)
    src, dst, w = e[:, 0].astype(int), e[:, 1].astype(int), e[:, 2]
    n = max(src.max(), dst.max()) + 1
    off = src != dst
    d = np.bincount(src, w, n) + np.bincount(dst[off], w[off], n)
    np.savetxt(os.path.join(TRI, 'gn', s + '.csv'), np.c_[src, dst, w / np.sqrt(d[src] * d[dst])],
               delimiter=',', header='src,dst,weight', comments='', fmt=['%d', '%d', '%.17g'])
