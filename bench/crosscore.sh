#!/usr/bin/env bash
# Cross-core figures beside other tools, in one sitting (see docs/CROSSCORE.md).
# Run on a quiet machine, as root for the RPC breakdown:
#   sudo bench/crosscore.sh [OUTDIR]
# Needs: oscost on PATH (or OSCOST=path), perf (linux-perf), taskset (util-linux), and
# core-to-core-latency (`cargo install core-to-core-latency`; skipped with a note if absent).
set -euo pipefail

OSCOST=${OSCOST:-oscost}
OUT=${1:-crosscore-$(date -u +%Y%m%dT%H%M%SZ)}
LOOPS=${LOOPS:-1000000}
mkdir -p "$OUT"
DB=(--db "$OUT/history.sqlite")

cpus=$(taskset -pc $$ | sed 's/.*: //')
last=$(python3 -c "import os; print(max(os.sched_getaffinity(0)))")
other=$(python3 -c "import os; s=sorted(os.sched_getaffinity(0)); print(s[-2] if len(s)>1 else '')")
echo "# allowed CPUs: $cpus; same-CPU on $last; cross-CPU pair $last:$other" | tee "$OUT/README.txt"

echo "== 1. oscost rpc (four scenarios, kernel-traced breakdown)"
"$OSCOST" rpc "${DB[@]}" --mech pipe,futex --explain --json "$OUT/rpc.json" --csv "$OUT/rpc.csv" \
  --html "$OUT/rpc.html" | tee "$OUT/rpc.txt"
# The corrected table of docs/CROSSCORE.md (untraced, traced, corrected sum, their ratios).
python3 "$(dirname "$0")/rpc-table.py" "$OUT/rpc.json" | tee "$OUT/rpc-table.md"

echo "== 2. same-CPU pipe round trip"
"$OSCOST" ipc "${DB[@]}" --mech pipe --class same-cpu --json "$OUT/ipc-same.json" | tee "$OUT/ipc-same.txt"
taskset -c "$last" perf bench sched pipe -l "$LOOPS" | tee "$OUT/perf-pipe-same.txt"

if [ -n "$other" ]; then
  echo "== 3. cross-CPU pipe round trip"
  "$OSCOST" ipc "${DB[@]}" --mech pipe,spin --pairs "$last:$other" --json "$OUT/ipc-cross.json" \
    | tee "$OUT/ipc-cross.txt"
  # perf bench has no placement option: its parent is one worker and it forks the other;
  # pin each to its own CPU as soon as the child exists.
  perf bench sched pipe -l "$LOOPS" > "$OUT/perf-pipe-cross.txt" &
  parent=$!
  child=""
  for _ in $(seq 400); do
    child=$(pgrep -P "$parent" | head -1 || true)
    [ -n "$child" ] && break
    sleep 0.002
  done
  [ -n "$child" ] || { echo "could not find perf bench's worker" >&2; wait "$parent"; exit 1; }
  taskset -pc "$last" "$parent" >/dev/null
  taskset -pc "$other" "$child" >/dev/null
  wait "$parent"
  cat "$OUT/perf-pipe-cross.txt"

  echo "== 4. core-to-core latency"
  "$OSCOST" c2c "${DB[@]}" --json "$OUT/c2c.json" --csv "$OUT/c2c.csv" --html "$OUT/c2c.html" \
    | tee "$OUT/c2c.txt"
  if command -v core-to-core-latency >/dev/null; then
    core-to-core-latency 5000 300 --bench 1 --cores "$other,$last" 2>&1 | tee "$OUT/c2c-ref.txt"
  else
    echo "core-to-core-latency not installed: cargo install core-to-core-latency" \
      | tee "$OUT/c2c-ref.txt"
  fi
else
  echo "one CPU only: cross-CPU figures skipped" | tee -a "$OUT/README.txt"
fi
echo "results in $OUT"
