#!/usr/bin/env python3
"""Pool the paired comparisons of several `kope bench` results documents.

    bench/paired_pool.py RESULTS.json [RESULTS.json ...]

For each pair of configurations (tuner+memory / random, tuner-nomemory /
random, tuner+memory / tuner-nomemory) it prints
  - the geometric mean of the per-case ratios of speedup vs reference over
    all (operator, case, repeat) pairs of all documents, with a percentile
    bootstrap interval over those pairs (the report's paired column, pooled);
  - per (operator, repeat) unit: the geometric mean over cases, how many
    units A wins, a one-sided sign test, and a bootstrap over units (cases
    of one operator are not independent; this is the conservative view).
Used for docs/results.md ("Tuner vs blind random search from the plain start").
"""
import json, math, random, sys


def speedup(case):
    s = case.get('speedup_ref')
    return s['median'] if isinstance(s, dict) else s


def log_ratios(ka, kb):
    """Per-case log(speedup A / speedup B) of two final kernels of one operator."""
    out = []
    for x, y in zip(ka['report']['cases'], kb['report']['cases']):
        sx, sy = speedup(x), speedup(y)
        if sx and sy:
            out.append(math.log(sx / sy))
    return out


def sessions(path, a, b):
    """(A kernel, B kernel) of the same operator and repeat, for every pair."""
    d = json.load(open(path))
    for f in d['final']:
        ks = {(k['config'], k.get('repeat', 0)): k for k in f['kernels']}
        for (c, r), k in ks.items():
            if c == a and (b, r) in ks:
                yield k, ks[(b, r)]


def bootstrap(v, seed):
    random.seed(seed)
    n = len(v)
    bs = sorted(math.exp(sum(random.choice(v) for _ in range(n)) / n) for _ in range(4000))
    return bs[100], bs[3899]


for a, b in [('tuner+memory', 'random'), ('tuner-nomemory', 'random'),
             ('tuner+memory', 'tuner-nomemory')]:
    v = [x for p in sys.argv[1:] for ka, kb in sessions(p, a, b) for x in log_ratios(ka, kb)]
    n = len(v)
    lo, hi = bootstrap(v, 1)
    print(f"{a} / {b}: {math.exp(sum(v)/n):.3f}x [{lo:.3f}, {hi:.3f}] over {n} "
          f"(op, case, repeat) pairs; A faster in {sum(x > 0 for x in v)}")

# per (op, repeat): geomean over cases, then a sign count and a bootstrap over units
for a, b in [('tuner+memory', 'random'), ('tuner-nomemory', 'random')]:
    u = []
    for p in sys.argv[1:]:
        for ka, kb in sessions(p, a, b):
            v = log_ratios(ka, kb)
            u.append(sum(v) / len(v))
    n = len(u)
    lo, hi = bootstrap(u, 2)
    k = sum(x > 0 for x in u)
    pv = sum(math.comb(n, i) for i in range(k, n + 1)) / 2 ** n
    print(f"units {a}/{b}: {math.exp(sum(u)/n):.3f}x [{lo:.3f}, {hi:.3f}], A faster in {k}/{n} "
          f"(op, repeat) units, one-sided sign test p={pv:.3f}")
