#!/usr/bin/env python3
"""How busy the workers of a run were, phase by phase, from a perf profile.

Record the run with call graphs at a fixed rate, then feed perf script's
samples to this script with the run's summary:

    perf record -F 29 -g -o run.data ssnmf solve -summary s.json ... g.parquet
    perf script -i run.data -F time,ip,sym | scripts/perfutil/util.py -hz 29 -workers 2 -summary s.json

For every phase of the summary's "io" table (input, each kNN round, the
graph's assembly, scale, solve) it prints the phase's seconds, the cores
busy on average (samples per second over the rate) and the core-seconds
left idle (workers minus busy, summed over windows of -window seconds),
then the windows where fewer than -serial cores were busy, with the code
most of their samples were in: the stretches that run on one goroutine.
The phases are placed by their seconds from the first sample, which starts
a fraction of a second before the run's clock.
"""
import argparse
import collections
import json
import re
import sys


def samples(lines):
    """Yields (time, frames) for each sample, frames innermost first."""
    t, frames = None, []
    for line in lines:
        m = re.match(r'^\s*(\d+\.\d+):\s*$', line)
        if m:
            if t is not None:
                yield t, frames
            t, frames = float(m.group(1)), []
            continue
        parts = line.strip().split(None, 1)
        if t is not None and len(parts) == 2:
            frames.append(parts[1])


def where(frames):
    """Names a sample by its innermost frames of the project's own code."""
    own = [f.split('ssnmf/ssnmf/')[-1] for f in frames if 'ssnmf/ssnmf/' in f or f.startswith('main.')]
    return ' < '.join(f[:48] for f in own[:2]) if own else (frames[0][:48] if frames else '?')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('-hz', type=float, required=True, help="perf record's -F")
    ap.add_argument('-workers', type=int, default=2, help="the run's -workers")
    ap.add_argument('-summary', required=True, help="the run's -summary JSON")
    ap.add_argument('-window', type=float, default=1.0, help='seconds a window')
    ap.add_argument('-serial', type=float, default=1.5, help='cores busy below which a window is listed')
    a = ap.parse_args()
    all_ = list(samples(sys.stdin))
    if not all_:
        sys.exit('util.py: no samples on standard input (perf script -F time,ip,sym)')
    t0 = all_[0][0]
    win = collections.defaultdict(list)
    for t, frames in all_:
        win[int((t - t0) // a.window)].append(where(frames))
    busy = {w: len(s) / a.window / a.hz for w, s in win.items()}
    phases, at = [], 0.0
    for ph in json.load(open(a.summary))['io']['phases']:
        phases.append((ph['phase'], at, at + ph['seconds']))
        at += ph['seconds']
    print(f"{'phase':<16} {'seconds':>8} {'cores busy':>10} {'idle core-s':>11}")
    for name, lo, hi in phases:
        ws = [w for w in busy if lo <= w * a.window < hi]
        if not ws:
            continue
        mean = sum(busy[w] for w in ws) / len(ws)
        idle = sum(max(0.0, a.workers - busy[w]) for w in ws) * a.window
        print(f"{name:<16} {hi - lo:8.1f} {mean:10.2f} {idle:11.1f}")
    print(f"\nwindows of {a.window:g} s with fewer than {a.serial:g} cores busy, by the code of most of their samples:")
    by = collections.Counter()
    for w, s in win.items():
        if busy[w] < a.serial:
            by[collections.Counter(s).most_common(1)[0][0]] += max(0.0, a.workers - busy[w]) * a.window
    for name, idle in by.most_common(15):
        print(f"{idle:8.1f} idle core-s  {name}")


if __name__ == '__main__':
    main()
