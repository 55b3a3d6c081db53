#!/usr/bin/env python3
"""Print one figure of an oscost --json file for bench/anchors.sh.

usage: pick.py FILE FIELD [param=value ...]
FIELD is value (the derived median), raw (the raw median) or pages_per_fault, optionally
divided: raw/1000 gives µs from ns; the
measurement is the first whose params match every param=value (values compared as text).
Prints "<number> <valid|invalid>", "nan <status>" for a valid measurement that gives no
figure (status below_resolution: the difference's interval reaches zero; unstable: its
interval is wider than half of it, noise rather than a number), or "nan missing" when
nothing matches. Why the status: a run without a figure is a run the comparison must count
as lost, never a silent gap (the 2026-11-26 16:25 sitting's S=2m row lost all five oscost
runs and its S=1m row two of five, and the table showed neither)."""
import json
import sys


def main():
    path, field, *filters = sys.argv[1:]
    field, _, div = field.partition("/")
    scale = float(div) if div else 1.0
    want = dict(f.split("=", 1) for f in filters)
    try:
        run = json.load(open(path))
    except (OSError, ValueError):
        print("nan missing")
        return
    for m in run.get("measurements", []):
        params = {k: (v if isinstance(v, str) else json.dumps(v)) for k, v in m["params"].items()}
        if any(params.get(k) != v for k, v in want.items()):
            continue
        if field == "pages_per_fault":
            # value is ns per counted fault, raw ns per page: their ratio is pages per fault.
            v, r = m.get("value"), m.get("raw")
            pages = v["median"] / r["median"] if v and r and r["median"] > 0 else float("nan")
            print(f"{pages:.1f} {'valid' if m['valid'] else 'invalid'}")
            return
        s = m.get(field)
        status = m.get("status", "ok")
        if field == "value" and m["valid"] and status in ("below_resolution", "unstable"):
            print(f"nan {status}")
            return
        if not s:
            print(f"nan {'valid' if m['valid'] else 'invalid'}")
            return
        print(f"{s['median'] / scale:.6g} {'valid' if m['valid'] else 'invalid'}")
        return
    print("nan missing")


main()
