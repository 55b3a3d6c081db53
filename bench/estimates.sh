#!/usr/bin/env bash
# Duration estimates against actual wall time, per measuring command (issue 11).
#
#   bench/estimates.sh [--history] [COMMAND ...]
#
# Prints, per command, the estimate oscost announced ("about N s"), the wall time it took and
# their ratio (actual / estimate; the goal is 0.7 to 1.3), with the exit code. Without
# --history every run uses --no-save and a history that does not exist (--db in the temporary
# directory: --no-save alone still reads the default history, whose make-up entry corrects
# the estimate without the line saying so), so the estimates are the plan's bounds alone
# (the goal is for the second runs of --history). With --history each command runs twice against a fresh temporary history (--db): the second
# estimate is learned from the first run's item times ("from the last 1 run").
# The binary is $OSCOST, else target/release/oscost of this checkout (built if missing).
# Leaves nothing behind: the temporary directory (stderr captures, history) is removed on
# every exit, Ctrl-C included.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
B=${OSCOST:-$here/target/release/oscost}
history=0
if [ "${1:-}" = "--history" ]; then history=1; shift; fi
if [ ! -x "$B" ]; then
  (cd "$here" && cargo build --release --quiet) || exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oscost-estimates.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
if [ $# -gt 0 ]; then
  cmds=("$@")
else
  cmds=("call" "syscall" "ctx" "ctx sweep --quick" "ctx timeslice --quick"
        "mem latency --quick" "fault --quick" "fault" "mmap lab --quick --size 256m"
        "ipc" "c2c" "rpc --no-trace" "run --quick" "run")
fi

# run CMD SAVE-ARGS: prints "estimate actual exit source"
one() {
  local c=$1; shift
  local s e rc est src
  s=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$B" $c "$@" >/dev/null 2>"$tmp/err"; rc=$?
  e=$(date +%s.%N)
  est=$(grep -o 'about [0-9.]* s' "$tmp/err" | head -1 | grep -o '[0-9.]*')
  if grep -q 'from the last' "$tmp/err"; then src=history
  elif grep -q 'from past runs' "$tmp/err"; then src=partly
  else src=bound; fi
  echo "${est:-?} $(echo "$e - $s" | bc) $rc $src"
}

row() {
  local c=$1 est=$2 act=$3 rc=$4 src=$5 ratio="-"
  if [ "$est" != "?" ] && [ "$(echo "$est > 0" | bc)" = 1 ]; then
    ratio=$(echo "scale=2; $act / $est" | bc)
  fi
  printf '%-30s | %8s | %8.1f | %5s | %-7s | %d\n' "$c" "$est s" "$act" "$ratio" "$src" "$rc"
}

printf '%-30s | %8s | %8s | %5s | %-7s | %s\n' command estimate "actual s" ratio source exit
printf '%s\n' "-------------------------------+----------+----------+-------+---------+-----"
for c in "${cmds[@]}"; do
  if [ $history = 1 ]; then
    db=$tmp/history.sqlite
    rm -f "$db"
    read -r est act rc src < <(one "$c" --db "$db")
    row "$c" "$est" "$act" "$rc" "$src"
    read -r est act rc src < <(one "$c" --db "$db")
    row "  (again)" "$est" "$act" "$rc" "$src"
  else
    read -r est act rc src < <(one "$c" --no-save --db "$tmp/none.sqlite")
    row "$c" "$est" "$act" "$rc" "$src"
  fi
done
