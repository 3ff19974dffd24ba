#!/usr/bin/python3
"""Leave-sets-out choice among trifactor settings: choose the setting with the best mean ARI on a
random half of the sets, score it (mean ARI, and the share of sets >= the k-means start) on the
other half; repeated R times.

Usage: lso.py R r-A.jsonl r-B.jsonl ...
"""
import json, sys, os
import numpy as np
from trifactor import read_runs

R = int(sys.argv[1])
runs = read_runs(sys.argv[2:])
sets = open(os.path.join(os.environ.get('TRI', '/work/tmp-tri'), 'sets.txt')).read().split()
ari = np.array([[d[s]['ari'] for s in sets] for _, d in runs])
start = np.array([runs[0][1][s]['ari_start'] for s in sets])
default = np.array([json.load(open(os.path.join(os.environ.get('TRI', '/work/tmp-tri'), 'def', s + '.json')))['ari'] for s in sets])
rng = np.random.default_rng(0)
held, held_def, held_ge, chosen = [], [], [], []
for _ in range(R):
    perm = rng.permutation(len(sets))
    tr, te = perm[:len(sets) // 2], perm[len(sets) // 2:]
    c = int(np.argmax(ari[:, tr].mean(axis=1)))
    chosen.append(runs[c][0])
    held.append(ari[c, te].mean())
    held_def.append(default[te].mean())
    held_ge.append(np.mean(ari[c, te] >= start[te] - 1e-12))
print(f"repeats {R}, halves {len(sets) // 2} train / {len(sets) - len(sets) // 2} held out")
print(f"held-out mean ARI of the chosen setting: {np.mean(held):.4f} (sd {np.std(held):.4f})")
print(f"held-out mean ARI of today's default on the same halves: {np.mean(held_def):.4f} (sd {np.std(held_def):.4f})")
d = np.array(held) - np.array(held_def)
print(f"held-out paired difference chosen - default: {d.mean():+.4f} (sd {d.std():.4f}; chosen ahead in {np.mean(d > 0):.2f} of the repeats)")
print(f"held-out share of sets >= k-means start: {np.mean(held_ge):.3f} (sd {np.std(held_ge):.3f})")
for n, _ in runs:
    print(f"  chosen {n}: {chosen.count(n)} times")
