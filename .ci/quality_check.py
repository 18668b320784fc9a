#!/usr/bin/env python3
"""Fail when a quality benchmark result drops below its floor.

    quality_check.py RESULTS.json   (written by ../shared/quality/run.py)
"""
import json
import sys

# Floors: the figures measured on the dev tasks when the ranking was last
# tuned, less a little slack for ties. Raise them as quality improves.
FLOORS = {"recall_inline": 0.80, "precision_inline": 0.52, "rr": 0.75}
CEILINGS = {"chars": 1200, "leaks": 0, "over_budget": 0}

r = json.load(open(sys.argv[1]))
a = r["aggregate"]["palace"]
bad = [f"{k} {a[k]:.3f} < {v}" for k, v in FLOORS.items() if a[k] is None or a[k] < v]
bad += [f"{k} {a[k]} > {v}" for k, v in CEILINGS.items() if a[k] is not None and a[k] > v]
for k in sorted(FLOORS) + sorted(CEILINGS):
    print(f"{k:18} {a[k]}")
if bad:
    sys.exit("quality below its floors: " + "; ".join(bad))
print("quality floors met")
