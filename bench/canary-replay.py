#!/usr/bin/env python3
"""Replay the core-speed canary's rule on saved runs (issue 12).

Given directories of `oscost run --json` files (e.g. from `OUT=DIR bench/order.sh 3`), recompute
each probe's figure from its samples with and without leaving out the samples tagged as taken
on a slowed core (docs/EVIDENCE.md, "A core slowed by what no check can see"), and print per
directory how many probes have a run-to-run spread (max/min of the figures) within 1.10.

usage: bench/canary-replay.py DIR [DIR ...]
"""
import glob
import json
import os
import statistics
import sys

SLOWED = 1.15  # engine::canary::SLOWED
MIN_FAST_SHARE = 0.25  # engine::canary::MIN_FAST_SHARE


def figure(m, filtered):
    """Median per unit of the paired differences (or raw samples), as engine::derive."""
    raw, base = m["samples"], m.get("baseline_samples") or []
    values = [r - b for r, b in zip(raw, base)] if len(base) == len(raw) else list(raw)
    tags, fastest = m.get("sample_canary", []), m.get("canary_fastest")
    if filtered and fastest and len(tags) == len(values):
        keep = [t <= fastest * SLOWED for t in tags]
        rounds = m.get("sample_rounds") or []
        if len(rounds) == len(values):
            # engine::canary::split_in_rounds: a round under a quarter fast is slowed whole.
            for r in set(rounds):
                idx = [i for i, x in enumerate(rounds) if x == r]
                if sum(keep[i] for i in idx) < MIN_FAST_SHARE * len(idx):
                    for i in idx:
                        keep[i] = False
        fast = [v for v, k in zip(values, keep) if k]
        if len(fast) < len(values) and len(fast) >= 3 and len(fast) >= MIN_FAST_SHARE * len(values):
            values = fast
    return statistics.median(values) / m.get("units_per_iteration", 1.0)


def main(dirs):
    if not dirs:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    for d in dirs:
        runs = [json.load(open(f)) for f in sorted(glob.glob(os.path.join(d, "*.json")))]
        line = [f"{d}: {len(runs)} runs"]
        for filtered in (False, True):
            figures = {}
            for r in runs:
                for m in r["measurements"]:
                    if m.get("valid") and m.get("samples"):
                        key = m["probe"] + " " + json.dumps(m["params"], sort_keys=True)
                        figures.setdefault(key, []).append(figure(m, filtered))
            spreads = [max(v) / min(v) for v in figures.values() if len(v) >= 2 and min(v) > 0]
            within = sum(s <= 1.10 for s in spreads)
            name = "slowed samples left out" if filtered else "every sample"
            line.append(f"{name}: {within} of {len(spreads)} probes within 1.10")
        print("; ".join(line))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
