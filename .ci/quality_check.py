#!/usr/bin/env python3
"""Fail when a quality benchmark result drops below its floor.

    quality_check.py RESULTS.json                      (written by ../shared/quality/run.py)
    quality_check.py RESULTS.json --replay REPLAY.json (the same tasks run with --replay N)

With --replay, the replayed run (every task asked N times as real requests,
so cooling and telemetry act between the rounds) must stay within
REPLAY_TOLERANCE of the plain run on recall, precision and MRR, with no leak
and nothing over budget: asking again must not lose what the first ask found.
"""
import json
import sys

# Floors: the latest dev figures (the benchmark and the packs are
# deterministic, so a run of the same code gives the same numbers), rounded
# down. Raise them whenever quality improves; a change that lowers one must
# say why.
FLOORS = {"recall_inline": 0.840, "precision_inline": 0.609, "rr": 0.820}
# The chars ceiling makes room for the reference line a foundational or
# protected card that fits where the request is keeps whatever the request
# is about (BENCHMARKS.md, "Retrieval quality", says what it cost and
# bought).
CEILINGS = {"chars": 759, "none_chars": 500, "leaks": 0, "over_budget": 0}
REPLAY_TOLERANCE = 0.05


def palace(path):
    return json.load(open(path))["aggregate"]["palace"]


a = palace(sys.argv[1])
bad = [f"{k} {a[k]:.3f} < {v}" for k, v in FLOORS.items() if a[k] is None or a[k] < v]
bad += [f"{k} {a[k]} > {v}" for k, v in CEILINGS.items() if a[k] is not None and a[k] > v]
for k in sorted(FLOORS) + sorted(CEILINGS):
    print(f"{k:18} {a[k]}")
if len(sys.argv) == 4 and sys.argv[2] == "--replay":
    r = palace(sys.argv[3])
    for k in sorted(FLOORS):
        print(f"{k:18} {r[k]} after replay")
        if r[k] is None or r[k] < a[k] - REPLAY_TOLERANCE:
            bad.append(f"{k} {r[k]:.3f} after replay, more than {REPLAY_TOLERANCE} below {a[k]:.3f}")
    for k in ("leaks", "over_budget"):
        if r[k]:
            bad.append(f"{k} {r[k]} after replay")
elif len(sys.argv) != 2:
    sys.exit(__doc__)
if bad:
    sys.exit("quality below its floors: " + "; ".join(bad))
print("quality floors met")
