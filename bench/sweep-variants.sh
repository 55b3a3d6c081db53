#!/usr/bin/env bash
# Issue 27 item 1: where the sweep's extra ~12% over lat_ctx's definition at small working
# sets comes from. One sitting, interleaved: bench/ref's lat_ctx (2 processes) at S=0 and 16k
# and `oscost ctx sweep --procs 2` as it runs by default and with each candidate cause
# changed alone by its experiment switch (docs/SWEEP.md):
#   default                         members forked from oscost, 20 ms samples, canary on
#   OSCOST_SWEEP_SPAWN=exec         members exec a fresh small copy of the binary
#   OSCOST_SWEEP_SAMPLE_MS=200      ring and overhead alternate in 200 ms batches
#   OSCOST_SWEEP_CANARY=off         no core-speed canary loop between samples
# Each round runs every side once, in an order rotated by round. Prints, per size and side,
# the median of the rounds, the spread (max/min) and the ratio to lat_ctx's median; invalid
# oscost runs are left out and counted. Run it on a quiet machine.
#
# usage: bench/sweep-variants.sh [--rounds N (5)] [--cpu C (the last allowed)]
# Env: OSCOST (binary; default: cargo build --release, target/release/oscost).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=5
CPU=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2 ;;
    --cpu) CPU=$2; shift 2 ;;
    *) echo "sweep-variants.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$CPU" ]; then
  CPU=$(taskset -cp $$ | sed 's/.*: //' | tr ',' '\n' | tail -1 | sed 's/.*-//')
fi
say() { echo "sweep-variants: $*" >&2; }
if [ -z "${OSCOST:-}" ]; then
  say "building oscost (release)"
  cargo build --release --quiet
  OSCOST=$PWD/target/release/oscost
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -Wall -o "$WORK/lat_ctx" bench/ref/lat_ctx.c
RES=$WORK/results.tsv
: >"$RES"
SIZES="0 16k"
bytes() { case $1 in *k) echo $(( ${1%k} * 1024 ));; *) echo "$1";; esac; }
laps_for() { local b; b=$(bytes "$1"); echo $(( 20000 * 16384 / (b + 16384) + 50 )); }
VARIANTS="default spawn=exec sample_ms=200 canary=off"

run_ref() { # round
  for s in $SIZES; do
    v=$(taskset -c "$CPU" "$WORK/lat_ctx" "$(bytes "$s")" 2 "$(laps_for "$s")" | tail -1 | awk '{print $2}')
    printf '%s\tlat_ctx\t%s\t%s\tvalid\n' "$s" "$1" "$v" >>"$RES"
  done
}
run_os() { # variant round
  local env=()
  case $1 in
    spawn=exec) env=(OSCOST_SWEEP_SPAWN=exec) ;;
    sample_ms=200) env=(OSCOST_SWEEP_SAMPLE_MS=200) ;;
    canary=off) env=(OSCOST_SWEEP_CANARY=off) ;;
  esac
  env -u OSCOST_SWEEP_SPAWN -u OSCOST_SWEEP_SAMPLE_MS -u OSCOST_SWEEP_CANARY "${env[@]}" \
    "$OSCOST" ctx sweep --procs 2 --sizes 0,16k --cpu "$CPU" --no-save --quiet \
    --json "$WORK/s.json" >/dev/null 2>"$WORK/last.err" || true
  for s in $SIZES; do
    printf '%s\t%s\t%s\t%s\n' "$s" "$1" "$2" \
      "$(python3 bench/lib/pick.py "$WORK/s.json" value/1000 size="$(bytes "$s")" 2>/dev/null | tr ' ' '\t' || printf 'nan\tmissing')" >>"$RES"
  done
  rm -f "$WORK/s.json"
}

SIDES="lat_ctx $VARIANTS"
n=$(echo $SIDES | wc -w)
for r in $(seq 1 "$ROUNDS"); do
  say "round $r/$ROUNDS"
  # Rotate the order by round so no side always follows the same one.
  order=$(echo $SIDES | tr ' ' '\n' | awk -v k=$(( (r - 1) % n )) -v n="$n" '{a[NR-1]=$0} END {for (i = 0; i < n; i++) print a[(i + k) % n]}')
  for side in $order; do
    if [ "$side" = lat_ctx ]; then run_ref "$r"; else run_os "$side" "$r"; fi
  done
done

python3 - "$RES" "$ROUNDS" <<'PY'
import math, statistics, sys
data = {}
for line in open(sys.argv[1]):
    size, side, rnd, val, validity = (line.rstrip("\n").split("\t") + ["", ""])[:5]
    d = data.setdefault(size, {}).setdefault(side, {"v": [], "invalid": 0})
    try:
        v = float(val)
    except ValueError:
        v = float("nan")
    if validity == "valid" and not math.isnan(v):
        d["v"].append(v)
    else:
        d["invalid"] += 1
print(f"| S | side | median µs/switch ({sys.argv[2]} rounds) | spread max/min | ratio to lat_ctx |")
print("|---|---|---|---|---|")
for size, sides in data.items():
    ref = sides.get("lat_ctx", {"v": []})["v"]
    mref = statistics.median(ref) if ref else None
    for side, d in sides.items():
        v = d["v"]
        if not v:
            print(f"| {size} | {side} | – | – | – |")
            continue
        m = statistics.median(v)
        spread = max(v) / min(v) if min(v) > 0 else float("inf")
        ratio = f"{m / mref:.3f}" if mref else "–"
        left = f" ({d['invalid']} invalid left out)" if d["invalid"] else ""
        print(f"| {size} | {side} | {m:.4g}{left} | {spread:.2f} | {ratio} |")
    if ref and max(ref) / min(ref) > 1.10:
        print(f"| {size} | host not steady: lat_ctx's own spread {max(ref) / min(ref):.2f} > 1.10, the rows of this size do not count | | | |")
PY
