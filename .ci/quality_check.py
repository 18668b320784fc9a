#!/usr/bin/env python3
"""Fail when a quality benchmark result drops below its floor.

    quality_check.py RESULTS.json   (written by ../shared/quality/run.py)
"""
import json
import sys

# Floors: the latest dev figures (the benchmark and the packs are
# deterministic, so a run of the same code gives the same numbers), rounded
# down. Raise them whenever quality improves; a change that lowers one must
# say why.
FLOORS = {"recall_inline": 0.818, "precision_inline": 0.574, "rr": 0.789}
CEILINGS = {"chars": 766, "none_chars": 500, "leaks": 0, "over_budget": 0}

r = json.load(open(sys.argv[1]))
a = r["aggregate"]["palace"]
bad = [f"{k} {a[k]:.3f} < {v}" for k, v in FLOORS.items() if a[k] is None or a[k] < v]
bad += [f"{k} {a[k]} > {v}" for k, v in CEILINGS.items() if a[k] is not None and a[k] > v]
for k in sorted(FLOORS) + sorted(CEILINGS):
    print(f"{k:18} {a[k]}")
if bad:
    sys.exit("quality below its floors: " + "; ".join(bad))
print("quality floors met")
