#!/usr/bin/env bash
# The Debian package: cargo-deb (installed from crates.io when missing) packs the release
# binary, its man pages and shell completions into target/debian/oscost_<version>_<arch>.deb;
# the package is installed with apt-get, `oscost run --quick --no-save` runs from /usr/bin and
# `man -w oscost` finds the page, and the package is removed again (also when a step fails).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "== deb: needs root and apt-get to install the package; not checked here" >&2
    exit 1
fi
command -v cargo-deb >/dev/null || cargo install cargo-deb --locked
[ -x target/release/oscost ] || cargo build --release
assets=target/deb-assets
rm -rf "$assets"
mkdir -p "$assets/man" "$assets/completions"
target/release/oscost man --dir "$assets/man" >/dev/null
gzip -9n "$assets"/man/*.1
target/release/oscost completions bash >"$assets/completions/oscost"
target/release/oscost completions zsh >"$assets/completions/_oscost"
target/release/oscost completions fish >"$assets/completions/oscost.fish"
echo "== deb: cargo deb"
rm -rf target/debian
cargo deb --no-build --quiet >/dev/null
deb=$(ls target/debian/oscost_*.deb)
echo "== deb: $deb, $(du -k "$deb" | cut -f1) KiB"
dpkg-deb --contents "$deb" | grep './usr/share/man/man1/oscost.1.gz' >/dev/null
if dpkg -s oscost >/dev/null 2>&1; then
    echo "== deb: an oscost package is installed already; not replacing it" >&2
    exit 1
fi
remove() { DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq oscost >/dev/null 2>&1 || true; }
trap remove EXIT
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" >/dev/null
[ "$(command -v oscost)" = /usr/bin/oscost ]
/usr/bin/oscost run --quick --quiet --no-save >/dev/null
man -w oscost
[ -f /usr/share/bash-completion/completions/oscost ]
remove
trap - EXIT
! dpkg -s oscost >/dev/null 2>&1
echo "== deb: installed, ran, removed"
