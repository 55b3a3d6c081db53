#!/usr/bin/env bash
# CI step for the simulator (issue 15): the riscv-tests suite through the command line, and the
# course-style program built from source with the cross compiler (installed here if missing),
# twice (-march=rv32im and rv32imc), run and compared with an 8-set direct-mapped I-cache of
# 2 words per line. `cargo test` already ran the 77 tests and the committed ELFs.
set -euo pipefail
cd "$(dirname "$0")/.."
OSCOST=./target/release/oscost
[ -x "$OSCOST" ] || cargo build --release

echo "== sim conformance ../shared/riscv-tests/elf"
"$OSCOST" sim conformance ../shared/riscv-tests/elf

if ! command -v riscv64-unknown-elf-gcc >/dev/null; then
    apt-get install -y gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== seed-style program: sim run, sim compare"
for march in rv32im rv32imc; do
    riscv64-unknown-elf-gcc crates/rvsim/programs/c/seed.c -O2 -march=$march -mabi=ilp32 \
        -nostdlib -o "$work/seed-$march.elf" 2>/dev/null
    status=0
    "$OSCOST" sim run "$work/seed-$march.elf" --icache sets=8,ways=1,words=2 || status=$?
    # The program returns 33 from main: that is the exit code of sim run.
    [ "$status" -eq 33 ] || { echo "seed-$march: exit $status, expected 33"; exit 1; }
done
"$OSCOST" sim compare "$work/seed-rv32im.elf" "$work/seed-rv32imc.elf" \
    --icache sets=8,ways=1,words=2 --json "$work/compare.json" --csv "$work/compare.csv"
python3 - "$work/compare.json" <<'PY'
import json, sys
builds = json.load(open(sys.argv[1]))["builds"]
assert [b["ended"]["kind"] for b in builds] == ["return", "return"], builds
assert builds[1]["text_bytes"] < builds[0]["text_bytes"]
print("compare JSON ok")
PY

# CoreMark (issue 25): built from ../shared/coremark for rv32im and rv32imc by sim bench and
# validated on every run (CoreMark's own check and the seed CRCs). Once, not timed: the speed
# figures of a CI machine are not results.
echo "== sim bench (CoreMark built and validated, timings ignored)"
"$OSCOST" sim bench --repeat 1 --no-qemu --json "$work/bench.json" >/dev/null
python3 - "$work/bench.json" <<'PY'
import json, sys
bench = json.load(open(sys.argv[1]))
names = [w["name"] for w in bench["workloads"]]
assert names == ["coremark-rv32im", "coremark-rv32imc", "loop"], (names, bench["notes"])
for w in bench["workloads"]:
    for t in w["simulator"]:
        assert t["valid"], (w["name"], t)
print("CoreMark validated:", ", ".join(names[:2]))
PY
