#!/usr/bin/env bash
# Browser test of the HTML reports (issue 14): Debian's chromium renders the report of a quick
# run, of a context-switch sweep, of a comparison and of a pipeline diagram (sim run
# --pipeview-html); each page is screenshotted and its DOM checked: no empty figure, no legend over 12 entries, no console error in the page's log.
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
    --html "$out/sweep.html" >/dev/null
$bin compare "$out/run-a.json" "$out/run-b.json" --html "$out/compare.html" >/dev/null
# The pipeline diagram of a timer interrupt (issue 26), with its Kanata log beside it.
$bin sim run crates/rvsim/programs/elf/timer-rv32imc.elf --pipeview interrupt-4:14 \
    --pipeview-html "$out/pipeview.html" --kanata "$out/pipeview.kanata" >/dev/null
grep -q '^Kanata' "$out/pipeview.kanata"

# A private profile, so the browser writes nothing into the user's home.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
browse() {
    # --no-sandbox: CI runs as root, where chromium's sandbox refuses to start.
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$profile" --enable-logging=stderr --v=0 "$@"
}

status=0
for page in run sweep compare pipeview; do
    url="file://$PWD/$out/$page.html"
    echo "== chromium: $page"
    browse --window-size=1300,1800 --screenshot="$out/$page.png" "$url" 2>"$out/$page.log" >/dev/null
    browse --dump-dom "$url" >"$out/$page.dom" 2>>"$out/$page.log"
    [ -s "$out/$page.png" ] || { echo "$page: no screenshot" >&2; status=1; }
    expect=()
    # The sweep ran --procs 2,4: its figure has one line (legend entry) per ring size.
    [ "$page" = sweep ] && expect=(--expect-legend "Context switch cost=2")
    python3 .ci/check_report_dom.py "$out/$page.dom" "$out/$page.log" --min-figures 1 "${expect[@]}" || status=1
done
exit $status
