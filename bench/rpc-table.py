#!/usr/bin/env python3
"""The corrected RPC table of docs/CROSSCORE.md from an `oscost rpc --json` run.

    sudo oscost rpc --mech pipe,futex --json rpc.json
    bench/rpc-table.py rpc.json

Per traced scenario x mechanism: the untraced time (rpc.total's median), the traced time
and the corrected parts' sum (means over the middle 80% of RPCs), each over untraced, tracing
adds, whether the corrected breakdown holds (within 15% of untraced), and the per-event costs.
"""
import json
import sys


def t(ns):
    if ns is None:
        return "—"
    for d, u in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if abs(ns) >= d:
            return f"{ns / d:.3g} {u}"
    return f"{ns:.3g} ns"


def main(path):
    run = json.load(open(path))
    ms = run["measurements"]
    key = lambda m: (m["params"].get("scenario"), m["params"].get("mech"))
    totals = {key(m): m for m in ms if m["probe"] == "rpc.total"}
    print("| scenario | mech | untraced | traced | corrected sum | traced / untraced | "
          "corrected / untraced | tracing adds | corrected valid | cost per event |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for m in ms:
        if m["probe"] != "rpc.traced":
            continue
        k = key(m)
        total = totals.get(k)
        u = total["value"]["median"] if total and total.get("value") else None
        tr = (m.get("additive") or {}).get("mean", {}).get("value")
        obs = m.get("observer") or {}
        cal = obs.get("calibration") or {}
        cs = (cal.get("corrected_sum") or {}).get("value")
        adds = obs.get("tracing_adds")
        corrected = [x for x in ms if x["probe"] == "rpc.corrected" and key(x) == k]
        ok = "—" if not corrected else ("yes" if all(x["valid"] for x in corrected) else "INVALID")
        ratio = lambda v: f"{v / u:.2f}" if v is not None and u else "—"
        costs = ", ".join(
            f"{c['group']} {c['ns']['value']:.0f} ±{(c['ns']['ci95'][1] - c['ns']['ci95'][0]) / 2:.0f} ns"
            for c in cal.get("costs", []))
        adds_s = "—" if not adds else (
            f"{100 * adds['value']:+.0f}% ±{50 * (adds['ci95'][1] - adds['ci95'][0]):.0f}")
        valid_u = "" if not total or total["valid"] else " (invalid)"
        print(f"| {k[0]} | {k[1]} | {t(u)}{valid_u} | {t(tr)} | {t(cs)} | {ratio(tr)} | "
              f"{ratio(cs)} | {adds_s} | {ok} | {costs or '—'} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: rpc-table.py RUN.json")
    main(sys.argv[1])
