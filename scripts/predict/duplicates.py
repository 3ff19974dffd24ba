#!/usr/bin/python3
"""Of the training rows whose predicted cluster differs from the solve's,
how many have an exact duplicate (equal features) among the training rows:

  duplicates.py DATA.csv[.gz] SOLVED.csv PREDICTED.csv

Identical rows get identical predictions, while the solve may give copies
different memberships (its graph treats them as distinct rows), so on a
set with many copies some changes are unavoidable.
"""
import collections
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from compare import memberships, read_table  # noqa: E402

_, x, _, _ = read_table(sys.argv[1])
_, cw = memberships(sys.argv[2])
_, cp = memberships(sys.argv[3])
count = collections.Counter(map(tuple, x))
changed = [i for i in range(len(cw)) if cw[i] != cp[i]]
dup = sum(1 for i in changed if count[tuple(x[i])] > 1)
rows_dup = sum(1 for r in x if count[tuple(r)] > 1)
print(f"{len(changed)} rows changed cluster, {dup} of them duplicated; {rows_dup} of {len(x)} rows are duplicated")
