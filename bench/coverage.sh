#!/usr/bin/env bash
# The interval-coverage experiment (issue 10): N consecutive invocations of the headline
# suite (`oscost run --quick` by default), then, per probe, how many of the N 95% intervals
# contain the median of the N medians. Goal: at least 9 of 10.
#
#   bench/coverage.sh [N] [-- extra oscost run arguments]
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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$N"); do
    "$OSCOST" run --quick --quiet --no-save --db "$tmp/db.sqlite" --json "$tmp/run$i.json" "$@" \
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
        by.setdefault((m["probe"], params), []).append(
            (v["median"], v["ci95"][0], v["ci95"][1]) if v and m["valid"] else None)
print(f"{'probe':58} {'valid':>5} {'covered':>8}  median of medians")
for (probe, params), rows in sorted(by.items()):
    ok = [r for r in rows if r]
    if len(ok) < 2:
        print(f"{(probe + ' ' + params)[:58]:58} {len(ok):>5} {'-':>8}  (too few valid runs)")
        continue
    mm = statistics.median(r[0] for r in ok)
    cov = sum(1 for _, lo, hi in ok if lo <= mm <= hi)
    print(f"{(probe + ' ' + params)[:58]:58} {len(ok):>5} {cov:>4}/{len(ok):<3}  {mm:.4g}")
PY
