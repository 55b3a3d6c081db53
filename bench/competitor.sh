#!/usr/bin/env bash
# The competitor experiment (issue 10): the probes a competitor on their CPU affects, run
# beside a competitor pinned to the same CPU that takes a fixed share of it (stress-ng
# --cpu-load, a duty cycle), for several shares; prints which came out valid. The smallest
# share that makes every probe invalid in every repetition is the figure for docs/EVIDENCE.md.
#
#   bench/competitor.sh [CPU] [REPS]      (default: the last CPU, 3 repetitions)
#
# Run it on a quiet machine (share 0 is the control: everything should be valid). Needs
# stress-ng and python3. Leaves nothing behind.
set -euo pipefail
CPU=${1:-$(( $(nproc) - 1 ))}
REPS=${2:-3}
# The binary under test: $OSCOST, else a fresh release build (never a stale one).
if [ -z "${OSCOST:-}" ]; then
    cargo build --release --quiet
    OSCOST=target/release/oscost
fi
tmp=$(mktemp -d)
hog=
cleanup() { [ -n "$hog" ] && kill "$hog" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
probe() { # name, args...
    local name=$1; shift
    "$OSCOST" "$@" --cpu "$CPU" --quick --quiet --no-save --json "$tmp/$name.json" \
        >/dev/null || [ $? -eq 1 ]
}
printf '%-8s %-4s %s\n' share rep "valid probes (of: syscall.null ctx.pipe/process ctx.futex/thread fault.anon)"
for share in 0 2 5 10 20 50 100; do
    for rep in $(seq 1 "$REPS"); do
        if [ "$share" -gt 0 ]; then
            stress-ng --cpu 1 --cpu-load "$share" --taskset "$CPU" --timeout 120s --quiet &
            hog=$!
            sleep 0.5
        fi
        probe syscall syscall --which null
        probe pipe ctx --mech pipe --mode process --clock direct
        probe futex ctx --mech futex --mode thread
        probe fault fault --kind anon --touch write --size 64m --rounds 4
        if [ -n "$hog" ]; then kill "$hog"; wait "$hog" 2>/dev/null || true; hog=; fi
        python3 - "$tmp" "$share" "$rep" <<'PY'
import json, sys
tmp, share, rep = sys.argv[1:]
out = []
for name in ("syscall", "pipe", "futex", "fault"):
    for m in json.load(open(f"{tmp}/{name}.json"))["measurements"]:
        occ = (m["evidence"].get("occupancy") or {}).get("share")
        held = f"{occ * 100:.0f}%" if occ is not None else "?"
        out.append(f"{m['probe']}={'valid' if m['valid'] else 'INVALID'}({held})")
print(f"{share + '%':8} {rep:4} " + " ".join(out))
PY
    done
done
