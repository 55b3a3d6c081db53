#!/usr/bin/env bash
# The fleet benchmark (docs/FLEET.md): N synthetic run files (default 1000) made from a real
# run, with planted odd hosts; times the import and the fleet report, reports the database
# size, and checks that exactly the planted hosts are named.
#
#   bench/fleet-scale.sh [SOURCE.json] [N] [PLANTED]
# SOURCE defaults to the recorded fixture; use a run of your own machine (oscost run --json).
set -euo pipefail
cd "$(dirname "$0")/.."
src="${1:-tests/fixtures/run-quick.json}"
n="${2:-1000}"
planted="${3:-5}"
cargo build --release --quiet
bin="$PWD/target/release/oscost"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 bench/fleet-synth.py "$src" "$work/runs" --runs "$n" --planted "$planted" --malformed 1 \
    | sort >"$work/planted.txt"
echo "files: $n runs + 1 malformed, $(du -sh "$work/runs" | cut -f1) on disk"

t0=$(date +%s.%N)
"$bin" history import "$work/runs" --db "$work/fleet.sqlite" || true   # exit 2: the malformed file
t1=$(date +%s.%N)
"$bin" fleet --db "$work/fleet.sqlite" --json "$work/fleet.json" -o "$work/fleet.html" >"$work/fleet.txt"
t2=$(date +%s.%N)
"$bin" history import "$work/runs" --db "$work/fleet.sqlite" >/dev/null 2>&1 || true
t3=$(date +%s.%N)

python3 - "$work/fleet.json" "$work/planted.txt" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
odd = sorted(o["name"] for o in f["odd"])
planted = sorted(open(sys.argv[2]).read().split())
assert odd == planted, f"odd {odd} != planted {planted}"
print(f"odd hosts = planted hosts: {', '.join(odd)}")
PY
awk -v a="$t0" -v b="$t1" -v n="$((n + 1))" 'BEGIN { printf "import %d files:        %.2f s\n", n, b - a }'
awk -v a="$t1" -v b="$t2" 'BEGIN { printf "fleet report:           %.2f s\n", b - a }'
awk -v a="$t2" -v b="$t3" 'BEGIN { printf "re-import (all dupes):  %.2f s\n", b - a }'
echo "database: $(du -h "$work/fleet.sqlite" | cut -f1) ($(stat -c %s "$work/fleet.sqlite") bytes)"
echo "HTML report: $(du -h "$work/fleet.html" | cut -f1)"
