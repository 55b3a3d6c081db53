#!/usr/bin/env bash
# Runs a command (the test suite) with HOME and TMPDIR pointed at fresh empty directories and
# fails if anything is left in them afterwards, or if the source tree gained files (a test's
# oscost writing into its working directory): tests must never write the user's history or
# leave files behind. Cargo and rustup keep their real homes.
# Usage: .ci/robust.sh cargo test --workspace
set -euo pipefail
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/home" "$scratch/tmp"
# mktemp makes 0700: the tests that drop to an unprivileged user need to reach their files.
chmod 0755 "$scratch"
chmod 1777 "$scratch/tmp"
tree() { git status --porcelain --untracked-files=all 2>/dev/null || true; }
before="$(tree)"
status=0
HOME="$scratch/home" TMPDIR="$scratch/tmp" XDG_DATA_HOME= OSCOST_DB= OSCOST_RUNTIME_DIR= "$@" || status=$?
left="$(cd "$scratch" && find home tmp -mindepth 1 | head -20)"
if [ -n "$left" ]; then
    echo "== the tests left files behind in HOME or TMPDIR:" >&2
    echo "$left" >&2
    exit 1
fi
added="$(diff <(echo "$before") <(tree) | grep '^>' | head -20 || true)"
if [ -n "$added" ]; then
    echo "== the tests changed the source tree:" >&2
    echo "$added" >&2
    exit 1
fi
exit "$status"
