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
def pairs(path, a, b):
    d = json.load(open(path)); out = []
    for f in d['final']:
        ks = {(k['config'], k.get('repeat', 0)): k for k in f['kernels']}
        for (c, r), k in ks.items():
            if c != a or (b, r) not in ks: continue
            ca = k['report']['cases']; cb = ks[(b, r)]['report']['cases']
            for x, y in zip(ca, cb):
                sx = x.get('speedup_ref'); sy = y.get('speedup_ref')
                sx = sx['median'] if isinstance(sx, dict) else sx
                sy = sy['median'] if isinstance(sy, dict) else sy
                if sx and sy: out.append(math.log(sx / sy))
    return out
for a, b in [('tuner+memory', 'random'), ('tuner-nomemory', 'random'), ('tuner+memory', 'tuner-nomemory')]:
    v = []
    for p in sys.argv[1:]: v += pairs(p, a, b)
    random.seed(1); n = len(v)
    bs = sorted(math.exp(sum(random.choice(v) for _ in range(n)) / n) for _ in range(4000))
    print(f"{a} / {b}: {math.exp(sum(v)/n):.3f}x [{bs[100]:.3f}, {bs[3899]:.3f}] over {n} (op, case, repeat) pairs; A faster in {sum(x>0 for x in v)}")
# per (op, repeat): geomean over cases, then a sign count and a bootstrap over units
def units(path, a, b):
    d = json.load(open(path)); out = []
    for f in d['final']:
        ks = {(k['config'], k.get('repeat', 0)): k for k in f['kernels']}
        for (c, r), k in ks.items():
            if c != a or (b, r) not in ks: continue
            v = []
            for x, y in zip(k['report']['cases'], ks[(b, r)]['report']['cases']):
                sx = x.get('speedup_ref'); sy = y.get('speedup_ref')
                sx = sx['median'] if isinstance(sx, dict) else sx
                sy = sy['median'] if isinstance(sy, dict) else sy
                if sx and sy: v.append(math.log(sx / sy))
            out.append(sum(v) / len(v))
    return out
for a, b in [('tuner+memory', 'random'), ('tuner-nomemory', 'random')]:
    u = []
    for p in sys.argv[1:]: u += units(p, a, b)
    n = len(u); random.seed(2)
    bs = sorted(math.exp(sum(random.choice(u) for _ in range(n)) / n) for _ in range(4000))
    k = sum(x > 0 for x in u)
    p = sum(math.comb(n, i) for i in range(k, n + 1)) / 2 ** n
    print(f"units {a}/{b}: {math.exp(sum(u)/n):.3f}x [{bs[100]:.3f}, {bs[3899]:.3f}], A faster in {k}/{n} (op, repeat) units, one-sided sign test p={p:.3f}")
