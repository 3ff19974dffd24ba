#!/usr/bin/python3
"""Two starts, the lower objective kept (as the product's -starts 2): the normalised one-hot
trifactor runs from the k-means starts of seeds 0 and 1. Prints per set the ARI of both starts'
results and of the kept one, and the means; >= start counts against the seed-0 k-means start.
"""
import json, os
import numpy as np

TRI = os.environ.get('TRI', '/work/tmp-tri')
ld = lambda f: {json.loads(l)['set']: json.loads(l) for l in open(os.path.join(TRI, f))}
a, b = ld('r-normonehot-accel-1e4.jsonl'), ld('r-normonehot-accel-1e4-seed1.jsonl')
sets = open(os.path.join(TRI, 'sets.txt')).read().split()
kept, ge, ge_own = [], 0, 0
print(f"{'set':14s} {'seed0':>7s} {'seed1':>7s} {'kept':>7s} {'start0':>7s} {'start1':>7s}")
for s in sets:
    r = a[s] if a[s]['objective'] <= b[s]['objective'] else b[s]
    kept.append(r['ari'])
    ge += r['ari'] >= a[s]['ari_start'] - 1e-12
    ge_own += r['ari'] >= r['ari_start'] - 1e-12
    print(f"{s:14s} {a[s]['ari']:7.4f} {b[s]['ari']:7.4f} {r['ari']:7.4f} {a[s]['ari_start']:7.4f} {b[s]['ari_start']:7.4f}")
print(f"mean ARI: seed0 {np.mean([a[s]['ari'] for s in sets]):.4f}  seed1 {np.mean([b[s]['ari'] for s in sets]):.4f}  kept {np.mean(kept):.4f}")
print(f"kept >= seed-0 k-means start: {ge}/27;  kept >= its own start: {ge_own}/27")
