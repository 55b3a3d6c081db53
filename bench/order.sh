#!/usr/bin/env bash
# Order effects and run-to-run spread of the default suite (issue 12).
#
# Runs `oscost run` forward and `oscost run --reverse` alternately, ROUNDS times each, on a
# quiet machine, then prints per headline probe:
#   - forward vs reversed: median of the forward runs' medians vs the reversed ones', and
#     whether they agree within their 95% intervals (mean half-width of the runs on each side);
#   - the spread over all invocations (max/min of the per-run medians; target ≤ 1.10).
# Usage: bench/order.sh [ROUNDS (default 3)] [extra oscost run options, e.g. --quick]
# Ends with a VERDICT line; exit 0 = no order effect, 1 = an order effect, 2 = nothing judged.
# Env: OSCOST (the binary; default target/release/oscost), OUT (directory; default a temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
shift || true
OSCOST=${OSCOST:-target/release/oscost}
[ -x "$OSCOST" ] || cargo build --release --quiet
KEEP=${OUT:-}
OUT=${OUT:-$(mktemp -d)}
mkdir -p "$OUT"
[ -n "$KEEP" ] || trap 'rm -rf "$OUT"' EXIT
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r/$ROUNDS: forward" >&2
  "$OSCOST" run --no-save --quiet --json "$OUT/fwd-$r.json" "$@" >/dev/null || true
  echo "round $r/$ROUNDS: reversed" >&2
  "$OSCOST" run --reverse --no-save --quiet --json "$OUT/rev-$r.json" "$@" >/dev/null || true
done
python3 - "$OUT" <<'PY'
import glob, json, os, statistics, sys
d = sys.argv[1]
seen = set()
def load(pattern):
    out = {}
    for f in sorted(glob.glob(os.path.join(d, pattern))):
        run = json.load(open(f))
        for m in run["measurements"]:
            params = " ".join(f"{k}={v}" for k, v in sorted(m["params"].items()) if k != "clock" or v != "direct")
            key = f'{m["probe"]} {params}'.strip()
            seen.add(key)
            if not m.get("valid") or not m.get("value"):
                continue
            v = m["value"]
            out.setdefault(key, []).append((v["median"], (v["ci95"][1] - v["ci95"][0]) / 2))
    return out
fwd, rev = load("fwd-*.json"), load("rev-*.json")
print(f"| probe | forward | reversed | agree within intervals | spread over {2*len(glob.glob(os.path.join(d,'fwd-*.json')))} runs (max/min) |")
print("|---|---|---|---|---|")
bad, judged, unjudged, moved, wide = 0, 0, [], [], []
for key in sorted(seen):
    f, r = fwd.get(key, []), rev.get(key, [])
    if not f or not r:
        print(f"| {key} | {len(f)} valid | {len(r)} valid | not judged | n/a |")
        unjudged.append(key)
        continue
    judged += 1
    mf, mr = statistics.median(x for x, _ in f), statistics.median(x for x, _ in r)
    hf, hr = statistics.mean(h for _, h in f), statistics.mean(h for _, h in r)
    ok = abs(mf - mr) <= hf + hr
    if not ok:
        bad += 1
        moved.append(f"{key} ({mf:.4g} vs {mr:.4g})")
    meds = [x for x, _ in f + r]
    spread = max(meds) / min(meds) if min(meds) > 0 else float("inf")
    if spread > 1.10:
        wide.append(f"{key} ({spread:.2f})")
    print(f"| {key} | {mf:.4g} ±{hf:.2g} | {mr:.4g} ±{hr:.2g} | {'yes' if ok else 'NO'} | {spread:.3f} |")
print()
if judged == 0:
    print("VERDICT: nothing judged: no probe had a valid run in both orders (a busy machine "
          "makes the checks fail; rerun on a quiet one)")
    sys.exit(2)
if bad == 0:
    print(f"VERDICT: no order effect: the {judged} of {len(seen)} probe(s) judged agree forward "
          f"vs reversed within their intervals")
else:
    print(f"VERDICT: ORDER EFFECT in {bad} of the {judged} of {len(seen)} probe(s) judged: "
          + "; ".join(moved))
if unjudged:
    print(f"not judged ({len(unjudged)}, no valid run in one order): " + ", ".join(unjudged))
print(f"spread over all invocations > 1.10 (issue 12's target) in {len(wide)} of {judged}"
      + (": " + ", ".join(wide) if wide else ""))
sys.exit(1 if bad else 0)
PY
