#!/usr/bin/env python3
"""Make a synthetic fleet from one real oscost run file, for the fleet benchmark and tests.

Each synthetic host is the real run with every timing (samples, baseline samples, and the
value/raw/difference summaries) scaled by a host factor drawn uniformly from 1 ± SPREAD: a
bounded host-to-host variation, so that no host but the planted ones can be odd by chance
(with Gaussian variation a 1,000-host fleet would have a few hosts beyond 3.5 robust
standard deviations, which the fleet report would rightly name).

Planted hosts run a different kernel (machine.kernel.release = PLANTED_KERNEL) and every probe
except `call.*` (a function call does not enter the kernel) is SLOWER times slower.

Usage: fleet-synth.py SOURCE.json OUTDIR [--runs N] [--planted K] [--malformed M] [--seed S]
Prints the planted host names, one per line, on stdout (for the caller to check).
"""

import argparse
import copy
import json
import os
import random
import sys

SPREAD = 0.02
SLOWER = 1.4
PLANTED_KERNEL = "5.10.0-planted"


def scale_summary(s, f):
    if not isinstance(s, dict):
        return
    for k in ("median", "mean", "min", "max", "p95", "mad"):
        if isinstance(s.get(k), (int, float)):
            s[k] = s[k] * f
    if isinstance(s.get("ci95"), list):
        s["ci95"] = [x * f for x in s["ci95"]]


def scale_run(run, f, probe_filter):
    for m in run["measurements"]:
        if not probe_filter(m["probe"]):
            continue
        for key in ("samples", "baseline_samples", "evidence_samples"):
            if isinstance(m.get(key), list):
                m[key] = [x * f for x in m[key]]
        for key in ("value", "raw", "baseline", "difference"):
            scale_summary(m.get(key), f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source")
    ap.add_argument("outdir")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--planted", type=int, default=5)
    ap.add_argument("--malformed", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.runs < 3 or not (0 <= a.planted < a.runs / 2):
        sys.exit("fleet-synth: need --runs >= 3 and 0 <= --planted < runs/2")
    with open(a.source) as fh:
        base = json.load(fh)
    os.makedirs(a.outdir, exist_ok=True)
    rng = random.Random(a.seed)
    # Planted hosts spread evenly through the fleet, not all at the start.
    planted = {int((k + 0.5) * a.runs / a.planted) for k in range(a.planted)}
    width = len(str(a.runs - 1))
    for i in range(a.runs):
        host = f"node-{i:0{width}d}"
        run = copy.deepcopy(base)
        scale_run(run, 1.0 + rng.uniform(-SPREAD, SPREAD), lambda p: True)
        if i in planted:
            run["machine"]["kernel"]["release"] = PLANTED_KERNEL
            scale_run(run, SLOWER, lambda p: not p.startswith("call."))
            print(host)
        run["machine"]["hostname"] = host
        run["labels"] = {"host": host, "campaign": "synthetic"}
        run["run_id"] = f"synth-{a.seed}-{i}"
        run["started_at"] = f"2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z"
        with open(os.path.join(a.outdir, f"{host}.json"), "w") as fh:
            json.dump(run, fh)
    for j in range(a.malformed):
        text = json.dumps(base)
        with open(os.path.join(a.outdir, f"malformed-{j}.json"), "w") as fh:
            fh.write(text[: len(text) // 2])


if __name__ == "__main__":
    main()
