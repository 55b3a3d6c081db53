"""Validate an oscost run JSON against the documented contract (docs/SCHEMA.md)."""
import json
import sys

run = json.load(open(sys.argv[1]))
for key in ["schema_version", "tool_version", "started_at", "command", "machine", "measurements"]:
    assert key in run, f"run is missing {key}"
version = run["schema_version"]
assert version in (1, 2), f"schema_version {version}"


def is_warning(w):
    """Version 2: a warning is a typed remark (its kind, subject and numbers); version 1: a
    sentence."""
    return isinstance(w, dict) and "kind" in w if version == 2 else isinstance(w, str)


for w in run.get("warnings", []):
    assert is_warning(w), f"run warning is not a version-{version} warning: {w!r}"
assert run["complete"] is True
ms = run["measurements"]
assert len(ms) >= 10, f"only {len(ms)} measurements"
summary_keys = ["n", "median", "ci95", "mean", "min", "max", "p95", "mad", "outliers"]
for m in ms:
    for key in ["probe", "params", "unit", "value", "raw", "baseline", "samples",
                "iterations_per_sample", "evidence", "checks", "warnings", "valid", "status"]:
        assert key in m, f"{m.get('probe')} is missing {key}"
    for key in summary_keys:
        assert key in m["raw"], f"{m['probe']} raw summary is missing {key}"
    assert m["raw"]["median"] > 0, m["probe"]
    assert m["raw"]["ci95"][0] <= m["raw"]["median"] <= m["raw"]["ci95"][1]
    # The figure's samples: those on a fast core by the canary's tags when at least a
    # quarter of them (and 3) are and the slowed ones read slower than them
    # (docs/EVIDENCE.md), else all of them.
    used = len(m["samples"])
    tags, fastest = m.get("sample_canary", []), m.get("canary_fastest")
    if fastest and len(tags) == used:
        is_fast = [t <= fastest * 1.15 for t in tags]
        # A round with under a quarter of its samples tagged fast counts as slowed whole
        # (engine::canary::split_in_rounds), when each sample names its round.
        rounds = m.get("sample_rounds", [])
        if len(rounds) == used:
            for r in set(rounds):
                members = [i for i, x in enumerate(rounds) if x == r]
                if sum(is_fast[i] for i in members) < 0.25 * len(members):
                    for i in members:
                        is_fast[i] = False
        fast = sum(is_fast)
        if fast < used and fast >= 3 and fast >= 0.25 * used:
            def median(v):
                v = sorted(v)
                k = len(v) // 2
                return v[k] if len(v) % 2 else (v[k - 1] + v[k]) / 2
            fast_s = [x for x, f in zip(m["samples"], is_fast) if f]
            slow_s = [x for x, f in zip(m["samples"], is_fast) if not f]
            if median(slow_s) > median(fast_s):
                used = fast
    assert used == m["raw"]["n"], f'{m["probe"]}: raw n {m["raw"]["n"]}, figure samples {used}'
    if m["status"] == "ok":
        assert m["value"] is not None and m["value"]["median"] > 0, m["probe"]
    elif m["status"] == "unstable":
        # Noise is not printed as a number, but the JSON keeps the figure and its interval.
        assert m["value"] is not None, m["probe"]
    else:
        assert m["value"] is None or m["status"] == "invalid", m["probe"]
    assert m["valid"] == all(c["ok"] for c in m["checks"]), m["probe"]
    for name, e in m["evidence"]["events"].items():
        assert e["supported"] or e["reason"], f"{m['probe']}: {name} unsupported without reason"
    assert m["evidence"]["rusage"]["iterations"] > 0
    for w in m["warnings"]:
        assert is_warning(w), f"{m['probe']}: warning is not a version-{version} warning: {w!r}"
probes = {m["probe"] for m in ms}
for p in ["call.function", "syscall.null", "vdso.clock_gettime", "ctx.pipe", "ctx.futex", "ctx.yield"]:
    assert p in probes, f"{p} missing from the suite"
valid = sum(m["valid"] for m in ms)
print(f"run JSON ok: {len(ms)} measurements, {valid} valid, {len(run.get('skipped', []))} skipped")
