#!/usr/bin/python3
"""The control: the product's scalar-scale model (default flags, 2 starts and -starts 1) on the
degree-normalised graph, beside the default on the raw graph and the normalised one-hot trifactor."""
import json, os
import numpy as np
TRI = os.environ.get('TRI', '/work/tmp-tri')
sets = open(os.path.join(TRI, 'sets.txt')).read().split()
t = {json.loads(l)['set']: json.loads(l) for l in open(os.path.join(TRI, 'r-normonehot-accel-1e4.jsonl'))}
cols = {'default': 'def', 'def-1st': 'def1', 'prod-norm': 'defn', 'prod-norm-1st': 'defn1'}
v = {c: [json.load(open(os.path.join(TRI, d, s + '.json')))['ari'] for s in sets] for c, d in cols.items()}
v['tri-norm-onehot'] = [t[s]['ari'] for s in sets]
st = np.array([t[s]['ari_start'] for s in sets])
print(f"{'set':14s} {'start':>7s} " + ' '.join(f'{c:>15s}' for c in v))
for i, s in enumerate(sets):
    print(f"{s:14s} {st[i]:7.4f} " + ' '.join(f'{v[c][i]:15.4f}' for c in v))
print(f"{'mean':14s} {st.mean():7.4f} " + ' '.join(f'{np.mean(v[c]):15.4f}' for c in v))
print(f"{'>= start0':14s} {'':7s} " + ' '.join(f'{int(np.sum(np.array(v[c]) >= st - 1e-12)):15d}' for c in v))
