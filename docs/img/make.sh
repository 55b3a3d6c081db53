#!/usr/bin/env bash
# Makes README's picture: the HTML report of one saved run, rendered by headless chromium.
#   docs/img/make.sh RUN.json OUT.png     # a run file, e.g. from `oscost mem latency --json F`
# The run is drawn by `oscost report`; the screenshot is the page's top 1100×1900 pixels
# (the machine's facts and the first family's figure).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 2 ] || { echo "usage: docs/img/make.sh RUN.json OUT.png" >&2; exit 2; }
bin=${OSCOST_BIN:-./target/release/oscost}
[ -x "$bin" ] || cargo build --release
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" report "$1" -o "$tmp/report.html" >/dev/null
# --no-sandbox: as root chromium's sandbox refuses to start; a private profile writes nothing home.
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --user-data-dir="$tmp/profile" --window-size=1100,1900 --screenshot="$tmp/shot.png" \
    "file://$tmp/report.html" >/dev/null 2>&1
mv "$tmp/shot.png" "$2"
