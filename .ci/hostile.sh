#!/usr/bin/env bash
# The hostile-input campaign, replayable: each case runs oscost as an attacker or a careless
# user would and says what must happen (exit code, the line it prints, what must still hold
# afterwards). Every case has a 20 s limit, so a hang fails instead of blocking CI. The same
# behaviours are unit and integration tests (tests/hostile.rs, journal.rs, never_lost.rs,
# inert.rs, mount_kill.rs); this list is the campaign's own form, run against the release
# binary in about half a minute.
# Usage: .ci/hostile.sh [path/to/oscost]   (default: target/release/oscost)
set -uo pipefail
cd "$(dirname "$0")/.."
bin="$(realpath "${1:-target/release/oscost}")"
w="$(mktemp -d)"
trap 'rm -rf "$w"' EXIT
export HOME="$w/home" XDG_DATA_HOME="$w/xdg" OSCOST_RUNTIME_DIR="$w/rt" TMPDIR="$w/tmp"
unset OSCOST_DB
mkdir -p "$HOME" "$TMPDIR"
cd "$w"
fails=0
cases=0

# ok NAME: the last case passed; bad NAME WHY: it failed.
bad() { echo "FAIL $1: $2" >&2; fails=$((fails + 1)); }
# run ARGS...: oscost with a 20 s limit; output in $w/out, exit code in $code.
run() {
    timeout 20 "$bin" "$@" >"$w/out" 2>&1
    code=$?
}
# expect CODE NEEDLE ARGS...: the exit code and a piece of the output.
expect() {
    local want="$1" needle="$2"
    shift 2
    cases=$((cases + 1))
    run "$@"
    if [ "$code" = 124 ]; then
        bad "$*" "still running after 20 s"
    elif [ "$code" != "$want" ]; then
        bad "$*" "exit $code, expected $want: $(head -c 300 "$w/out")"
    elif ! grep -qF -- "$needle" "$w/out"; then
        bad "$*" "no '$needle' in: $(head -c 300 "$w/out")"
    fi
}
# holds WHAT TEST...: a condition that must hold after the cases above.
holds() {
    local what="$1"
    shift
    cases=$((cases + 1))
    "$@" || bad "$what" "does not hold"
}
# no_raw FILE: no terminal control byte (ESC, BEL, C1 CSI) and no right-to-left override.
no_raw() { ! LC_ALL=C grep -q $'\x1b\|\x07\|\xc2\x9b\|\xe2\x80\xae' "$1"; }

fixture="$OLDPWD/tests/fixtures/run-quick.json"
elf="$OLDPWD/crates/rvsim/programs/elf/loop-rv32imc.elf"
elfs="$OLDPWD/crates/rvsim/programs/elf"
cp "$fixture" a.json
cp "$fixture" keep.json
mkfifo fifo.json
python3 - "$fixture" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
P = "\x1b]0;pwned\x07\x1b[2J\u202e=HYPERLINK(\"http://evil\",\"click\")<script>alert(1)</script>\"><img src=x onerror=alert(1)>|"
r["machine"]["hostname"] = "h" + P
r["machine"]["cpu"]["model_name"] = "=2+2" + P
r["command"] = ["oscost", "run", P]
r["labels"] = {"host": "=HYPERLINK(\"http://evil\")<script>", "rack": "@SUM(A1)"}
r.pop("run_id", None)
for m in r["measurements"]:
    m["probe"] = "-" + P + m["probe"]
    m["params"]["x"] = P
    m["warnings"].append("=" + P)
json.dump(r, open("evil.json", "w"))
for m in r["measurements"]:
    m["samples"] = [x * 1.5 for x in m["samples"]]
r["started_at"] = "2030-01-01T00:00:00Z"
json.dump(r, open("evil2.json", "w"))
def variant(name, change):
    v = json.loads(json.dumps(json.load(open(sys.argv[1]))))
    change(v)
    json.dump(v, open(name, "w"))
variant("v0.json", lambda v: v.__setitem__("schema_version", 0))
variant("date.json", lambda v: v.__setitem__("started_at", "not a date"))
variant("host.json", lambda v: v["machine"].__setitem__("hostname", "h" * (1 << 20)))
variant("tz.json", lambda v: v.__setitem__("started_at", "2026-01-01T10:00:00+14:00"))
variant("neg.json", lambda v: v.__setitem__("schema_version", -1))
variant("frac.json", lambda v: v.__setitem__("schema_version", 1.5))
text = open(sys.argv[1]).read().replace('"started_at"', '"started_at": "x", "started_at"', 1)
open("dup.json", "w").write(text)
EOF

## Security: the knob journal restores only what oscost changed, in a directory of its own.
mkdir -m 700 rt
printf '%s\nPWNED\n' "$w/keep.json" >rt/knob-999999-1-0
expect 0 "not a knob oscost changes" history list --db h.sqlite
holds "planted knob entry wrote nothing" cmp -s keep.json "$fixture"
mkdir -m 1777 shared
printf '%s\nPWNED\n' "$w/keep.json" >shared/knob-999999-1-0
OSCOST_RUNTIME_DIR="$w/shared" expect 0 "writable by everyone" history list --db h.sqlite
holds "a 1777 runtime directory is neither used nor removed" test -f shared/knob-999999-1-0
ln -s rt rt-link
OSCOST_RUNTIME_DIR="$w/rt-link" expect 0 "is a symlink" history list --db h.sqlite
holds "the entry behind a symlinked runtime directory wrote nothing" cmp -s keep.json "$fixture"

## Security: text from a run file is data in every output.
expect 0 "imported 1 run" history import evil.json --db h.sqlite
for args in "history list" "history show 1" "fleet" "compare evil.json evil2.json"; do
    expect 0 "" $args --db h.sqlite
    holds "$args: no raw escape" no_raw "$w/out"
done
expect 0 "" export evil.json --format csv
holds "export csv: no formula cell" python3 -c '
import csv, sys
for row in csv.reader(open(sys.argv[1])):
    for c in row:
        if c[:1] and c[0] in "=+-@":
            try:
                float(c)  # a number is a number
            except ValueError:
                sys.exit("formula cell: " + c[:40])' "$w/out"
expect 0 "" fleet --db h.sqlite --group-by rack --csv f.csv
holds "fleet --csv: no formula cell" bash -c '! grep -q "^[=+@]\|,[=+@]" f.csv'
expect 0 "" export evil.json --format markdown
holds "export markdown: no raw markup" bash -c "! grep -q '<script\|<img' '$w/out'"
expect 0 "" compare evil.json evil2.json --format markdown
holds "compare markdown: no raw markup" bash -c "! grep -q '<script\|<img' '$w/out'"
expect 0 "" compare evil.json evil2.json --svg c.svg
holds "compare --svg: no raw escape in the XML" no_raw c.svg

## Data loss: no input is ever an output; no two outputs share a path.
expect 2 "is this command's input" report a.json -o a.json
expect 2 "is this command's input" compare a.json keep.json --html keep.json
expect 2 "is this command's input" export a.json --format csv -o a.json
cp "$elf" e.elf
expect 2 "is this command's input" sim run e.elf --json e.elf
expect 2 "named for two outputs" fleet --db h.sqlite --json x --csv x
expect 2 "named for two outputs" compare a.json keep.json --svg x --html x
holds "no input was changed" cmp -s a.json "$fixture"
holds "no ELF was changed" cmp -s e.elf "$elf"

## Data loss: a measurement is never lost.
expect 2 "No space left on device" call --quick --json /dev/full --db ok.sqlite
expect 0 "call" history list --db ok.sqlite
expect 2 "" history import nonexistent.json --db new.sqlite
holds "an import of nothing creates no database" test ! -e new.sqlite
expect 2 "ends in '/'" call --quick --csv x.csv/
holds "refused before measuring" bash -c "! grep -q 'to measure, about' '$w/out'"

## Hangs and memory: readers take regular files only.
expect 2 "a FIFO" history import fifo.json --db h.sqlite
expect 2 "a FIFO" report fifo.json -o r.html
expect 2 "a FIFO" compare fifo.json a.json
expect 2 "a FIFO" export fifo.json --format csv
expect 2 "a FIFO" sim run fifo.json
expect 2 "a FIFO" history list --db fifo.json
expect 2 "a FIFO" syscall --quick --db fifo.json
expect 2 "a character device" sim run /dev/zero
expect 2 "a character device" report /dev/urandom -o r.html
ln -s loop loop
expect 2 "symbolic links" history list --db loop
cpu="$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')"
pairs="$(printf "$cpu:$cpu,%.0s" $(seq 5000))$cpu:$cpu"
expect 0 "" ipc --quick --mech pipe --budget 50ms --pairs "$pairs" --no-save --json p.json
holds "5,001 copies of one pair are measured once" python3 -c '
import json, sys; sys.exit(len(json.load(open(sys.argv[1]))["measurements"]) != 1)' p.json

## Smaller: import validation, option refusals, exit codes.
expect 2 "schema_version is 0" history import v0.json --db h.sqlite
expect 2 "is not a time" history import date.json --db h.sqlite
expect 2 "is given twice" history import dup.json --db h.sqlite
expect 2 "1048576 bytes" history import host.json --db h.sqlite
expect 0 "imported 1 run" history import tz.json --db tz.sqlite
expect 0 "2025-12-31 20:00:00" history list --db tz.sqlite
expect 2 "schema_version is -1; a schema version is a whole number" history import neg.json
expect 2 "schema_version is 1.5; a schema version is a whole number" history import frac.json
expect 2 "use e.g. 4096, 4k" fault --size 1p --no-save
expect 2 "(at most 1024t)" fault --size 2000t --no-save
head -c 3000 "$elf" >cut.elf
expect 2 "truncated: its section header table ends at byte" sim run cut.elf
holds "a cut ELF is not told in parser byte ranges" bash -c "! grep -q 'range \[0x' '$w/out'"
OSCOST_RUNTIME_DIR="$w/shared" expect 2 "see the warning above" fault --quick --size 4m --no-save
holds "a refused runtime directory is said once" \
    test "$(grep -o 'writable by everyone' "$w/out" | wc -l)" = 1
expect 2 "--max-instructions 0" sim run e.elf --max-instructions 0
expect 2 "sets given twice" sim run e.elf --icache sets=8,sets=16
expect 2 "--pair:" rpc --pair 0 --quick --no-save
cases=$((cases + 1))
"$bin" call --budget 20s --no-save >/dev/null 2>"$w/err" &
pid=$!
for _ in $(seq 100); do grep -q "oscost:" "$w/err" && break; sleep 0.05; done
sleep 0.2
kill -TERM "$pid"
wait "$pid"
code=$?
[ "$code" = 143 ] || bad "SIGTERM" "exit $code, expected 143"

## Security: outputs are opened as the kernel would open them for the user.
mkdir -m 1777 sticky
echo keep >victim
if [ "$(id -u)" = 0 ] && [ "$(cat /proc/sys/fs/protected_symlinks 2>/dev/null)" = 1 ]; then
    ln -s "$w/victim" sticky/report.html
    chown -h nobody sticky/report.html
    expect 2 "does not let you write through" report a.json -o sticky/report.html
    holds "a link another user planted in a sticky directory is not followed" \
        cmp -s victim <(echo keep)
else
    echo "(protected_symlinks is off or not root: the planted-link case is not run)"
fi
mkdir pages
ln -s "$w/victim" pages/oscost.1
expect 2 "never written through a link" man --dir pages
holds "man --dir wrote nothing through the planted link" cmp -s victim <(echo keep)
touch notadir
expect 2 "not a directory" man --dir notadir
cp "$fixture" kept.json
chmod 600 kept.json
[ "$(id -u)" = 0 ] && chgrp nogroup kept.json
before="$(stat -c '%a %g' kept.json)"
cases=$((cases + 1))
run export a.json --format json -o kept.json
[ "$code" = 0 ] || bad "export -o kept.json" "exit $code: $(head -c 200 "$w/out")"
holds "a replaced file keeps its mode and group" test "$(stat -c '%a %g' kept.json)" = "$before"
holds "no temporary file is left beside an output" bash -c '! ls -a | grep -q "^\.oscost-"'
mkdir -p -m 700 ud rt
touch ud/.oscost-999999-1-0.tmp
printf '%s\n' "$w/ud" >rt/userdir-999999-1-0
expect 0 "never acted on" history list --db h.sqlite
holds "a planted userdir entry deletes nothing" test -f ud/.oscost-999999-1-0.tmp
expect 2 '\u{202e}' call --no-save --label "$(printf 'a=\e]0;pwned\a\e[2J\u202e')"
holds "argument errors are escaped" no_raw "$w/out"
expect 2 "two outputs" fleet --db h.sqlite --json - --csv -
expect 2 "not a stream" history list --db -

## Security: the compiler never takes a file name for an option.
if command -v riscv64-unknown-elf-gcc >/dev/null; then
    printf '#include <stdint.h>\nint main(void){volatile uint32_t s=0;for(uint32_t i=0;i<9;i++)s+=i;for(;;);}\n' >lab.c
    cp lab.c ./-fdump-tree-original=victim.c
    echo keep >victim.c
    expect 0 "built for" sim compare --max-instructions 2000 -- -fdump-tree-original=victim.c
    holds "a source named like an option wrote no dump" cmp -s victim.c <(echo keep)
    expect 0 "-nostdlib" sim compare --runtime none --max-instructions 2000 lab.c
    mkfifo inc.fifo
    printf '#include "inc.fifo"\nint main(void){return 0;}\n' >fifo.c
    cases=$((cases + 1))
    timeout 20 "$bin" sim compare fifo.c >/dev/null 2>&1 &
    pid=$!
    sleep 2
    kill -TERM "$pid"
    wait "$pid"
    code=$?
    [ "$code" = 143 ] || bad "SIGTERM while compiling" "exit $code, expected 143"
    holds "the compiler's scratch is removed on SIGTERM" \
        bash -c '! ls rt 2>/dev/null | grep -q "^scratch-"'
else
    echo "(no riscv64-unknown-elf-gcc: the compiler cases are not run)"
fi

## Data loss: the run is kept before anything is printed.
cases=$((cases + 1))
timeout 20 "$bin" call --quick --db full.sqlite --csv full.csv >/dev/full 2>"$w/err"
code=$?
[ "$code" = 2 ] || bad "stdout on /dev/full" "exit $code, expected 2: $(cat "$w/err")"
grep -q "panicked" "$w/err" && bad "stdout on /dev/full" "panicked"
holds "a full stdout keeps the CSV" test -s full.csv
expect 0 "call" history list --db full.sqlite
for args in "history list --db full.sqlite" "machine" "compare a.json keep.json" \
    "sim run $elf"; do
    cases=$((cases + 1))
    timeout 20 "$bin" $args >/dev/full 2>"$w/err"
    code=$?
    { [ "$code" = 2 ] && grep -q "standard output" "$w/err" && ! grep -q panicked "$w/err"; } ||
        bad "$args >/dev/full" "exit $code: $(head -c 200 "$w/err")"
done
cases=$((cases + 1))
timeout 20 "$bin" call --quick --db pipe.sqlite | true
code="${PIPESTATUS[0]}"
[ "$code" = 141 ] || [ "$code" = 0 ] || bad "stdout closed" "exit $code"
expect 0 "call" history list --db pipe.sqlite
cases=$((cases + 1))
(ulimit -f 40; timeout 20 "$bin" call --quick --db fsize.sqlite --json fsize.json) >/dev/null 2>"$w/err"
code=$?
[ "$code" -lt 128 ] || bad "ulimit -f" "killed by signal $((code - 128))"
holds "a file size limit leaves no hot journal" test ! -e fsize.sqlite-journal

## Wrong but valid: a gate that compared nothing fails.
python3 - "$fixture" <<'EOF2'
import json, sys
r = json.load(open(sys.argv[1]))
for m in r["measurements"]:
    m["valid"] = False
    m["checks"] = m.get("checks", []) + [{"name": "x", "expected": "y", "observed": "z", "ok": False}]
json.dump(r, open("invalid.json", "w"))
EOF2
expect 1 "compared nothing" compare a.json invalid.json --fail-above 5

## Wrong but valid: a competitor at the lowest priority is seen and named.
if command -v chrt >/dev/null && command -v taskset >/dev/null; then
    chrt -i 0 taskset -c "$cpu" sh -c 'while :; do :; done' &
    idle=$!
    expect 0 "" ctx --quick --mech pipe --mode process \
        --cpu "$cpu" --no-save --json idle.json
    holds "a SCHED_IDLE loop on the CPU makes the figure invalid and is named" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["measurements"][0]
named = m["evidence"]["occupancy"]["others"]["tasks"]
sys.exit(m["valid"] or not any(t["policy"] == "idle" and t["runnable"] for t in named))' idle.json
    kill "$idle"
    wait "$idle" 2>/dev/null
else
    echo "(no chrt or taskset: the low-priority competitor case is not run)"
fi

## Hangs: a stopped partner ends its round; the Kanata log is linear.
cases=$((cases + 1))
timeout 30 "$bin" ipc --quick --mech pipe --no-save >"$w/out" 2>&1 &
pid=$!
# Every partner oscost forks (a child of oscost, itself the child of timeout) is stopped.
for _ in $(seq 60); do
    for child in $(pgrep -P "$(pgrep -P "$pid" | head -1)" 2>/dev/null); do
        kill -STOP "$child" 2>/dev/null
    done
    sleep 0.05
done
wait "$pid"
code=$?
[ "$code" = 124 ] && bad "stopped partner" "still running after 30 s"
tr -s " \n" " " <"$w/out" | grep -q "was stopped" || bad "stopped partner" "no reason given"
# (exit 124 is the guest's instruction limit, not the time limit: judged by time here)
cases=$((cases + 1))
t0=$SECONDS
timeout 60 "$bin" sim run "$elf" --pipeview 0:100000 --kanata k.log --max-instructions 200000 \
    >/dev/null 2>&1
[ $((SECONDS - t0)) -lt 20 ] && [ -s k.log ] ||
    bad "--kanata over 100,000 steps" "took $((SECONDS - t0)) s"

# The simulator's slow paths. Code that rewrites an instruction it runs every round (with
# fence.i, and a counter in its own page), 100 million instructions (exit 124: the
# instruction limit): it took about 50 s when every change rebuilt the page's blocks, seconds
# now. An ebreak/mret trap loop runs on the reference engine (some 50 MIPS): the default
# instruction limit would take minutes, and the time limit ends it (a small one here, so the
# case takes about 2 s) with exit 124 and a message naming that limit and how to raise it
# (the message tells it from timeout's own 124).
cases=$((cases + 1))
t0=$SECONDS
timeout 60 "$bin" sim run "$elfs/smc-rv32im.elf" --max-instructions 100000000 >"$w/out" 2>&1
code=$?
{ [ "$code" = 124 ] && grep -q "instruction limit of 100000000" "$w/out" &&
    [ $((SECONDS - t0)) -lt 20 ]; } ||
    bad "sim run smc.elf, 100M instructions" "exit $code after $((SECONDS - t0)) s"
cases=$((cases + 1))
t0=$SECONDS
timeout 60 "$bin" sim run "$elfs/traploop-rv32im.elf" --time-limit 2 >"$w/out" 2>&1
code=$?
tr -s " \n" " " <"$w/out" >"$w/flat"
{ [ "$code" = 124 ] && grep -q "time limit of 2 s reached after [0-9]* instructions" "$w/flat" &&
    grep -q "raise it with --time-limit SECONDS" "$w/flat" && [ $((SECONDS - t0)) -lt 20 ]; } ||
    bad "sim run traploop.elf --time-limit 2" "exit $code after $((SECONDS - t0)) s: $(head -c 300 "$w/out")"

## Limits: allocation refused, a small stack, the history's lock waited on.
cases=$((cases + 1))
(ulimit -v 200000; timeout 20 "$bin" sim run "$elf" --memory 1g) >"$w/out" 2>&1
code=$?
{ [ "$code" = 2 ] && grep -q "cannot allocate" "$w/out"; } || bad "ulimit -v" "exit $code: $(head -c 200 "$w/out")"
python3 - "$fixture" <<'EOF3'
import json, sys
r = json.load(open(sys.argv[1]))
r["measurements"][0]["samples"] = [1.5] * 4000000
json.dump(r, open("huge.json", "w"))
EOF3
for args in "history import huge.json --db huge.sqlite" "report huge.json -o huge.html"; do
    cases=$((cases + 1))
    (ulimit -v 200000; timeout 20 "$bin" $args) >"$w/out" 2>&1
    code=$?
    { [ "$code" = 2 ] && grep -q "more memory, which this process cannot get" "$w/out"; } ||
        bad "ulimit -v: $args" "exit $code: $(head -c 200 "$w/out")"
done
cases=$((cases + 1))
(ulimit -s 64; timeout 20 "$bin" --version) >"$w/out" 2>&1 || bad "ulimit -s 64" "$(head -c 200 "$w/out")"
expect 0 "imported 1 run" history import a.json --db lock.sqlite
python3 -c '
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
time.sleep(8)
c.execute("COMMIT")' lock.sqlite &
sleep 0.5
expect 0 "saved as run 2" call --quick --db lock.sqlite
wait

if [ "$fails" -gt 0 ]; then
    echo "== hostile cases: $fails of $cases failed" >&2
    exit 1
fi
echo "== hostile cases: all $cases held"
