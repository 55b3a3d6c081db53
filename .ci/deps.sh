#!/usr/bin/env bash
# CI dependencies from Debian's packages, installed once (one `apt-get update`) before any step
# needs them: the RISC-V cross compiler (sim), chromium (HTML screenshots), ansible and a
# single-node slurm (fleet), prometheus (promtool) and prometheus-node-exporter (metrics),
# man-db (the package's man page), and what ../shared/ripes/build.sh builds Ripes with (Qt 5,
# cmake, g++; here, so that its build in the background never runs apt-get beside another). A
# package already installed is not touched.
set -euo pipefail
pkgs=(gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf chromium ansible slurm-wlm munge
    prometheus prometheus-node-exporter man-db
    qtbase5-dev libqt5svg5-dev libqt5charts5-dev cmake g++ make patch xz-utils)
need=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -eq 0 ]; then
    echo "== deps: all present"
    exit 0
fi
if ! command -v apt-get >/dev/null || [ "$(id -u)" != 0 ]; then
    echo "== deps: missing ${need[*]} and cannot apt-get install here; the steps that need them say so"
    exit 0
fi
echo "== deps: installing ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
