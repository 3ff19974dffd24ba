#!/usr/bin/python3
"""Per-set table of the trifactor runs against the k-means start, today's default and GMM.

Usage: table.py r-A.jsonl [r-B.jsonl ...]   (columns in the order given)
"""
import json, sys, os
import numpy as np
from trifactor import read_runs

TRI = os.environ.get('TRI', '/work/tmp-tri')
sets = open(os.path.join(TRI, 'sets.txt')).read().split()
runs = read_runs(sys.argv[1:])
gmm = {}
for line in open('/work/tmp-quality22/anchors.jsonl'):
    r = json.loads(line)
    if r['method'] == 'gmm':
        gmm[r['set']] = r['ARI']
default = {s: json.load(open(os.path.join(TRI, 'def', s + '.json')))['ari'] for s in sets}
default1 = {s: json.load(open(os.path.join(TRI, 'def1', s + '.json')))['ari'] for s in sets}
start = {s: runs[0][1][s]['ari_start'] for s in sets}
hdr = f"{'set':14s} {'n':>6s} {'k':>3s} {'start':>7s} {'default':>7s} {'def-1st':>7s} " + ' '.join(f"{n:>13s}" for n, _ in runs) + f" {'gmm':>7s}"
print(hdr)
cols = {n: [] for n, _ in runs}
for s in sets:
    r0 = runs[0][1][s]
    line = f"{s:14s} {r0['n']:6d} {r0['k']:3d} {start[s]:7.4f} {default[s]:7.4f} {default1[s]:7.4f} "
    for n, d in runs:
        a = d[s]['ari']
        cols[n].append(a)
        mark = '+' if a >= start[s] - 1e-12 else ' '
        line += f"{a:12.4f}{mark} "
    line += f"{gmm[s]:7.4f}"
    print(line)
m = lambda v: float(np.mean(v))
line = f"{'mean':14s} {'':6s} {'':3s} {m(list(start.values())):7.4f} {m(list(default.values())):7.4f} {m(list(default1.values())):7.4f} "
for n, _ in runs:
    line += f"{m(cols[n]):12.4f}  "
line += f"{m([gmm[s] for s in sets]):7.4f}"
print(line)
line = f"{'>= start':14s} {'':6s} {'':3s} {'':7s} {sum(default[s] >= start[s] - 1e-12 for s in sets):7d} {sum(default1[s] >= start[s] - 1e-12 for s in sets):7d} "
for n, _ in runs:
    line += f"{sum(a >= start[s] - 1e-12 for a, s in zip(cols[n], sets)):12d}  "
print(line)
line = f"{'> default':14s} {'':6s} {'':3s} {'':7s} {'':7s} {'':7s} "
for n, _ in runs:
    line += f"{sum(a > default[s] for a, s in zip(cols[n], sets)):12d}  "
print(line)
