#!/usr/bin/env bash
# Browser test of the HTML reports (issue 14): Debian's chromium renders the report of a quick
# run, of a context-switch sweep, of a comparison and of a pipeline diagram (sim run
# --pipeview-html), and the report of the recorded fault and rpc fixtures; each page is
# screenshotted and its DOM checked: no empty figure, no legend over 12 entries, no console
# error in the page's log, no table cell holding a figure narrower than its content, no table
# wider than the page or row taller than 5 text lines at 1100 px, no figure label over another
# label, a data point or a data curve.
# Screenshots and DOM dumps stay in target/ci-output/ for a person to look at.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null; then
    echo "== installing chromium (Debian package)"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

out=target/ci-output
rm -rf "$out"
mkdir -p "$out"
# OSCOST_BIN: try another build (e.g. target/debug/oscost) without a release build.
bin=${OSCOST_BIN:-./target/release/oscost}
[ -x "$bin" ] || cargo build --release

echo "== runs for the reports"
$bin run --quick --quiet --no-save --json "$out/run-a.json" --html "$out/run.html" >/dev/null
$bin run --quick --quiet --no-save --json "$out/run-b.json" >/dev/null
$bin ctx sweep --quick --quiet --no-save --sizes 0,4k,16k,64k,256k,1m,4m --procs 2,4 \
    --json "$out/sweep.json" --html "$out/sweep.html" >/dev/null
$bin compare "$out/run-a.json" "$out/run-b.json" --html "$out/compare.html" >/dev/null
# The pipeline diagram of a timer interrupt (issue 26), with its Kanata log beside it.
$bin sim run crates/rvsim/programs/elf/timer-rv32imc.elf --pipeview interrupt-4:14 \
    --pipeview-html "$out/pipeview.html" --kanata "$out/pipeview.kanata" >/dev/null
grep -q '^Kanata' "$out/pipeview.kanata"
# The simulator's cache sweep (its SVG, put in a page as a report's figure is), when the
# RISC-V cross compiler is here to build its program.
pages=(run sweep compare pipeview)
if command -v riscv64-unknown-elf-gcc >/dev/null; then
    $bin sim sweep crates/rvsim/programs/c/loop.c --svg "$out/simsweep.svg" >/dev/null
    { echo '<!doctype html><html><body><figure>'; cat "$out/simsweep.svg"; echo '</figure></body></html>'; } \
        >"$out/simsweep.html"
    pages+=(simsweep)
else
    echo "sim sweep: no riscv64-unknown-elf-gcc, its figure not checked" >&2
fi
# The recorded fixtures: a fault run (cases told apart by their parameters), an rpc run, and
# every other family recorded (their figures' point counts are checked like the others'),
# the recorded sweep as sweep-recorded (sweep is the one measured above).
fixtures=(fault rpc memlat sweep-recorded c2c ipc mmap timeslice)
for f in "${fixtures[@]}"; do
    $bin report "tests/fixtures/runs/${f%-recorded}.json" -o "$out/$f.html" >/dev/null
done
# A report of runs of several kinds, recorded on one machine, one of them under load (as
# if other work ran when it started): grouped by kind, its figures and tables checked as the
# others are, and the machine's facts shown once (below), the load under its run's label.
python3 - tests/fixtures/runs/memlat.json "$out/memlat-busy.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1], encoding="utf-8"))
run["machine"]["load"]["loadavg"] = [7.6, 5.0, 3.0]
for cpu in run["machine"]["load"]["per_cpu"]:
    cpu["busy"] = 1.0
json.dump(run, open(sys.argv[2], "w", encoding="utf-8"))
PY
$bin report tests/fixtures/runs/c2c.json "$out/memlat-busy.json" \
    tests/fixtures/runs/fault.json -o "$out/kinds.html" >/dev/null
pages+=(kinds)

# A page the table-cell check must refuse: a figure squeezed into a cell too narrow for it.
printf '%s\n' '<!doctype html><html><body><table><tr><td class="num" style="width:1px;overflow-wrap:anywhere">1938 ns/fault</td></tr></table></body></html>' \
    >"$out/narrow.html"
# ... and a figure whose interval line wraps, leaving its count alone on the next line.
printf '%s\n' '<!doctype html><html><body><table><tr><td class="num" style="width:1px"><span class="nw">1.41 ns/load</span><span class="ci" style="display:block"><span class="nw">+0.02/−0.04</span> · <span class="nw">n=9</span></span></td><td>prose</td></tr></table></body></html>' \
    >"$out/narrow-ci.html"

# A page the table check must refuse: a table wider than the page, and a row made tall by
# prose (what the reports' warnings and notes did before they became footnotes).
prose=$(printf 'interval did not reach ±2%% before the time budget spent; %.0s' $(seq 40))
printf '%s\n' "<!doctype html><html><body><table><tr><td class=\"num\" style=\"white-space:nowrap\">1938 ns/fault $(printf '%.0s 95%% CI 1900 – 1990 · n=18' $(seq 20))</td></tr><tr><td>fault.anon</td><td>$prose</td></tr></table></body></html>" \
    >"$out/wide.html"

# A page the label check must refuse: two labels of one figure drawn over each other, a
# third drawn across a data curve, a fourth across a cache marker's line, a fifth running
# off the figure's left edge.
printf '%s\n' '<!doctype html><html><body><figure><svg width="300" height="100"><text x="10" y="30">L3 32 MiB</text><text x="20" y="32">knee 48 KiB</text><polyline fill="none" stroke="#0072B2" stroke-width="2" points="0,75 300,75"/><text x="150" y="80">≈ 43.8 ns</text><polyline fill="none" stroke="#6E6E6E" stroke-width="1" points="260,0 260,100"/><text x="230" y="50">L1d 32 KiB</text><text x="-40" y="95" font-size="10">timeslice slice=1ms</text></svg></figure></body></html>' \
    >"$out/overlap.html"

# with_cell_probe PAGE: a copy of PAGE carrying .ci/cell_probe.js, .ci/label_probe.js and
# .ci/point_probe.js, whose verdicts on the table cells, the figures' labels and their drawn
# points end up in the dumped DOM (the reports themselves carry no script).
with_cell_probe() {
    python3 - "$1" "${1%.html}.probe.html" <<'PY'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
js = "".join(open(f".ci/{p}", encoding="utf-8").read() for p in ("cell_probe.js", "label_probe.js", "point_probe.js"))
open(sys.argv[2], "w", encoding="utf-8").write(page.replace("</body>", f"<script>{js}</script></body>", 1))
PY
}

# A private profile, so the browser writes nothing into the user's home.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
browse() {
    # --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@"
}

status=0
for page in "${pages[@]}" "${fixtures[@]}"; do
    url="file://$PWD/$out/$page.html"
    echo "== chromium: $page"
    # 1100 px: a laptop's browser window; tables must fit it without a scroll bar.
    browse --window-size=1100,1800 --screenshot="$out/$page.png" "$url" 2>"$out/$page.log" >/dev/null
    # The DOM comes from the copy with the cell probe: same page, plus the probe's verdict.
    with_cell_probe "$out/$page.html"
    browse --window-size=1100,1800 --dump-dom "file://$PWD/$out/$page.probe.html" \
        >"$out/$page.dom" 2>>"$out/$page.log"
    [ -s "$out/$page.png" ] || { echo "$page: no screenshot" >&2; status=1; }
    expect=()
    # The sweep ran --procs 2,4: its figure has one line (legend entry) per ring size, and
    # a ring size that a busy machine left without a valid point keeps its entry, saying
    # "(no valid point)" (report::sweep::svg). The run's own analysis gives both counts, so
    # neither is guessed; with no figure at all there is no legend to check.
    if [ "$page" = sweep ]; then
        read -r rings with_figure < <(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["analysis"]["curves"]; print(len(c), sum(any(r["size"] > 0 and r["per_switch"] for r in x["rows"]) for x in c))' "$out/sweep.json")
        if [ "$with_figure" -gt 0 ]; then
            expect=(--expect-legend "Context switch cost=$rings")
        else
            echo "sweep: no ring size has a figure (every point invalid on this machine now): legend not checked" >&2
        fi
    fi
    # Every page but the pipeline diagram has tables of figures and figures with labels.
    # ... and every figure of theirs counts its points: drawn = given − stated omissions.
    # The simulator's sweep is a figure alone: its labels and points.
    case $page in
    pipeview) ;;
    simsweep) expect+=(--labels --points) ;;
    *) expect+=(--cells --tables --labels --points) ;;
    esac
    python3 .ci/check_report_dom.py "$out/$page.dom" "$out/$page.log" --min-figures 1 "${expect[@]}" || status=1
done

# The mmap lab's figures draw no INVALID or unstable row as a value (the recorded run has an
# invalid row); the same page with that row's note turned back into a number is refused.
echo "== mmap: no invalid or unstable row drawn as a value"
python3 .ci/check_not_drawn.py "$out/mmap.html" || status=1
sed 's/not plotted: INVALID/0.021/' "$out/mmap.html" >"$out/mmap-drawn.html"
if python3 .ci/check_not_drawn.py "$out/mmap-drawn.html" 2>/dev/null; then
    echo "mmap-drawn.html: an invalid row drawn as a value was not refused" >&2
    status=1
fi

echo "== kinds: grouped by kind, the machine once"
python3 - "$out/kinds.html" <<'PY' || status=1
import sys
page = open(sys.argv[1], encoding="utf-8").read()
machine = page[page.index('<section id="machine">'):]
machine = machine[: machine.index("</section>")]
kinds = page.count('<section class="kind"')
header = machine[machine.index('<table class="facts">'):]
columns = header[: header.index("</tr>")].count("<th>") - 1  # beside "fact"
vm = machine.count("running in a virtual machine")
load = machine.count("load average 7.60")
if kinds != 3 or columns != 1 or vm > 2 or load < 1:
    sys.exit(f"kinds.html: {kinds} kind sections (3 expected), {columns} machine columns (1), "
             f"the VM warning {vm} times (at most 2: its list and the full facts), "
             f"the busy run's load {load} times (at least 1)")
print(f"kinds: {kinds} kinds, one machine column, the VM warning {vm} times")
PY

# refuses PAGE CHECK PATTERN...: the check (--cells, --tables, --labels) must refuse the page
# out/PAGE.html, and its complaint must name every PATTERN (grep).
refuses() {
    local page=$1 check=$2
    shift 2
    echo "== the ${check#--} check refuses $page.html"
    with_cell_probe "$out/$page.html"
    browse --window-size=1100,1800 --dump-dom "file://$PWD/$out/$page.probe.html" \
        >"$out/$page.dom" 2>"$out/$page.log"
    if python3 .ci/check_report_dom.py "$out/$page.dom" "$out/$page.log" --min-figures 0 "$check" \
        2>"$out/$page.err"; then
        echo "$page.html: the ${check#--} check passed a page it must refuse" >&2
        return 1
    fi
    for pattern in "$@"; do
        if ! grep -q -- "$pattern" "$out/$page.err"; then
            echo "$page.html: refused, but not for '$pattern':" >&2
            cat "$out/$page.err" >&2
            return 1
        fi
    done
}
refuses narrow --cells "narrower than its content" || status=1
refuses narrow-ci --cells "narrower than its content: 0: 1.41 ns/load" || status=1
refuses wide --tables "table wider than its page" "row 1 (fault.anon) is .* lines tall" || status=1
refuses overlap --labels "'L3 32 MiB' over 'knee 48 KiB'" "'≈ 43.8 ns' over a curve" \
    "'L1d 32 KiB' over a marker line" "'timeslice slice=1ms' cut off at the figure's edge" || status=1
echo "== the point check refuses figures that drop points silently"
cp tests/fixtures/html/points-broken.html "$out/points.html"
with_cell_probe "$out/points.html"
browse --window-size=1300,1800 --dump-dom "file://$PWD/$out/points.probe.html" >"$out/points.dom" 2>"$out/points.log"
if python3 .ci/check_report_dom.py "$out/points.dom" "$out/points.log" --min-figures 0 --points 2>"$out/points.err"; then
    echo "points.html: the point check passed figures that drop points" >&2
    status=1
else
    for want in "figure 1 (silent drop): shows 2 data marks for 3 points" \
        "figure 2 (unstated): 1 points not drawn, 0 said so" \
        "figure 3 (uncounted): does not count its points" \
        "figure 4 (claims): claims 3 points drawn of 3 given with 1 left out" \
        "figure 5 (off the page): shows 0 data marks for 1 points"; do
        grep -qF "$want" "$out/points.err" || {
            echo "points.html: not refused for: $want" >&2
            status=1
        }
    done
    if grep -q "figure 6 (sound)" "$out/points.err"; then
        echo "points.html: the sound figure was refused:" >&2
        cat "$out/points.err" >&2
        status=1
    fi
fi
exit $status
