#!/usr/bin/env bash
# The Prometheus exposition of a run, as monitoring reads it: `promtool check metrics`
# (Debian's prometheus) lints what `--openmetrics` and `export --format openmetrics` write,
# and node_exporter's textfile collector (prometheus-node-exporter), pointed at the
# directory oscost wrote into, serves the metrics on 127.0.0.1, with a hostile host name
# (quotes, a backslash, braces) kept inside its label value.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${OSCOST_BIN:-./target/release/oscost}
[ -x "$bin" ] || cargo build --release
for tool in promtool prometheus-node-exporter; do
    if ! command -v "$tool" >/dev/null; then
        echo "== metrics: $tool missing (.ci/deps.sh installs it)" >&2
        exit 1
    fi
done
dir=$(mktemp -d)
exporter=""
cleanup() {
    [ -z "$exporter" ] || kill "$exporter" 2>/dev/null || true
    [ -z "$exporter" ] || wait "$exporter" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
host='ci"host\} {x="1"}'
echo "== metrics: oscost stat --openmetrics, promtool check metrics"
"$bin" stat --quick --quiet --no-save --label "host=$host" \
    --openmetrics "$dir/oscost.prom" -- true >/dev/null
promtool check metrics <"$dir/oscost.prom"
"$bin" export tests/fixtures/run-quick.json --format openmetrics -o "$dir/run.prom"
promtool check metrics <"$dir/run.prom"
echo "== metrics: node_exporter's textfile collector on 127.0.0.1"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
    --collector.disable-defaults --collector.textfile \
    --collector.textfile.directory="$dir" >"$dir/exporter.log" 2>&1 &
exporter=$!
python3 - "$port" "$host" <<'PY'
import sys, time, urllib.request
port, host = sys.argv[1], sys.argv[2]
url = f"http://127.0.0.1:{port}/metrics"
for _ in range(100):
    try:
        text = urllib.request.urlopen(url, timeout=2).read().decode()
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit(f"node_exporter did not answer on {url}")
escaped = host.replace("\\", "\\\\").replace('"', '\\"')
want = [
    f'oscost_stat_run_valid{{command="true",host="{escaped}",output="null",per="run"}} 1',
    'oscost_call_function_seconds{cpus="0",host="vm",per="call"}',
]
missing = [w for w in want if w not in text]
errors = [l for l in text.splitlines()
          if l.startswith("node_textfile_scrape_error") and not l.endswith(" 0")]
if missing or errors:
    sys.exit(f"scrape: missing {missing}, errors {errors}\n{text}")
print(f"== metrics: {sum(l.startswith('oscost_') for l in text.splitlines())} oscost samples scraped")
PY
