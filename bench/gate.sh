#!/usr/bin/env bash
# The compare-gate experiment (issue 10): N pairs of back-to-back `oscost run --quick` on an
# unchanged build, each pair compared with `--fail-above 5%` (the history of all runs so far
# on this machine supplies the drift). Prints the exit code per pair (goal: 0 regressions),
# and per probe the smallest change the gate would detect: the larger of the interval's
# reach (B/A upper bound − 1), the history's threshold and the minimum effect, median over
# pairs.
#
#   bench/gate.sh [N]
#   GATE_WARMUP=K bench/gate.sh [N]   (default K=3)
#
# All runs save into one temporary history (--db in the temp dir), as a CI job's runs save
# into its own; K warm-up invocations run first so that even the first pair is held against
# a history of K runs (a history needs 3 runs of a probe before it counts), as a CI job's
# would be after its first runs. GATE_WARMUP=0 shows the gate without any history.
#
# Run it on a quiet machine. Needs python3. Leaves nothing behind (a temp dir, removed).
set -euo pipefail
N=${1:-10}
# The binary under test: $OSCOST, else a fresh release build (never a stale one).
if [ -z "${OSCOST:-}" ]; then
    cargo build --release --quiet
    OSCOST=target/release/oscost
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
db="$tmp/db.sqlite"
run() { "$OSCOST" run --quick --quiet --db "$db" >/dev/null || [ $? -eq 1 ]; }
for i in $(seq 1 "${GATE_WARMUP:-3}"); do run; done
regressions=0
for i in $(seq 1 "$N"); do
    run; run
    set +e
    "$OSCOST" compare --last 2 --db "$db" --fail-above 5% --format json >"$tmp/cmp$i.json" 2>"$tmp/err$i"
    rc=$?
    set -e
    echo "pair $i: exit $rc $(head -c 300 "$tmp/err$i" | tr '\n' ' ')"
    [ $rc -eq 1 ] && regressions=$((regressions + 1))
    [ $rc -gt 1 ] && { cat "$tmp/err$i"; exit $rc; }
done
echo "pairs with a regression at --fail-above 5%: $regressions of $N"
python3 - "$tmp" "$N" <<'PY'
import json, sys, statistics
tmp, n = sys.argv[1], int(sys.argv[2])
by = {}
for i in range(1, n + 1):
    c = json.load(open(f"{tmp}/cmp{i}.json"))
    for p in c["pairs"]:
        if not p["valid"] or not p["ratio_ci95"]:
            continue
        lo, hi = p["ratio_ci95"]
        reach = max(hi - 1, 1 - lo) * 100
        drift = p.get("history_drift_pct") or 0.0
        by.setdefault(f"{p['probe']} {p['params']}", []).append(max(reach, drift, 2.0))
print(f"{'probe':60} smallest detectable change (median of {n} pairs)")
for k, v in sorted(by.items()):
    print(f"{k[:60]:60} {statistics.median(v):6.1f}%")
PY
