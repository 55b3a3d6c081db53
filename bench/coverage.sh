#!/usr/bin/env bash
# The interval-coverage experiment (issue 10): N consecutive invocations of the headline
# suite (`oscost run --quick` by default), then, per probe, how many of the N 95% intervals
# contain the median of the N medians. Goal: at least 9 of 10.
#
#   bench/coverage.sh [N] [-- extra oscost run arguments]
#   COVERAGE_WARMUP=K bench/coverage.sh ...   (default K=3)
#
# The runs save into a temporary history (--db in the temp dir), as a user's runs save into
# theirs, so each printed interval includes the run-to-run drift that history shows
# (at least 3 earlier valid runs of the probe; see docs/EVIDENCE.md). K warm-up invocations
# run first to start that history and are not counted. The "within" column counts the
# intervals from each run's own samples alone (ci95_within_run), for comparison.
#
# Run it on a quiet machine. Needs python3. Leaves nothing behind (a temp dir, removed).
set -euo pipefail
N=${1:-10}
shift || true
[ "${1:-}" = "--" ] && shift
# The binary under test: $OSCOST, else a fresh release build (never a stale one).
if [ -z "${OSCOST:-}" ]; then
    cargo build --release --quiet
    OSCOST=target/release/oscost
fi
WARMUP=${COVERAGE_WARMUP:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$WARMUP"); do
    "$OSCOST" run --quick --quiet --db "$tmp/db.sqlite" "$@" >/dev/null || [ $? -eq 1 ]
done
for i in $(seq 1 "$N"); do
    "$OSCOST" run --quick --quiet --db "$tmp/db.sqlite" --json "$tmp/run$i.json" "$@" \
        >/dev/null || [ $? -eq 1 ]
done
python3 - "$tmp" "$N" <<'PY'
import json, sys, statistics
tmp, n = sys.argv[1], int(sys.argv[2])
by = {}
for i in range(1, n + 1):
    run = json.load(open(f"{tmp}/run{i}.json"))
    for m in run["measurements"]:
        params = " ".join(f"{k}={v}" for k, v in sorted(m["params"].items())
                          if k not in ("rounds", "reps"))
        v = m.get("value")
        within = (v.get("ci95_within_run") or v["ci95"]) if v else None
        by.setdefault((m["probe"], params), []).append(
            (v["median"], v["ci95"], within) if v and m["valid"] else None)
print(f"{'probe':50} {'valid':>5} {'covered':>8} {'within':>7}  median of medians")
for (probe, params), rows in sorted(by.items()):
    ok = [r for r in rows if r]
    name = (probe + ' ' + params)[:50]
    if len(ok) < 2:
        print(f"{name:50} {len(ok):>5} {'-':>8} {'-':>7}  (too few valid runs)")
        continue
    mm = statistics.median(r[0] for r in ok)
    cov = sum(1 for _, (lo, hi), _ in ok if lo <= mm <= hi)
    win = sum(1 for _, _, (lo, hi) in ok if lo <= mm <= hi)
    print(f"{name:50} {len(ok):>5} {cov:>4}/{len(ok):<3} {win:>3}/{len(ok):<3}  {mm:.4g}")
PY
