#!/usr/bin/env bash
# Sizing figures for the operations guide: `derive work` on the embedded default (SQLite and a
# folder) running 24 jobs — twelve 16-megapixel and twelve 6-megapixel JPEGs from the shared
# fixtures, each to a 2048 px JPEG, a 1024 px WebP and a 320 px WebP — with 1, 2 and 4 slots,
# reporting wall time, jobs per second and peak memory (GNU time's maximum resident set).
#
#   bash Benchmarks/worker.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" time python3
swift build -c release --product derive > /dev/null
derive="$(swift build -c release --show-bin-path)/derive"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
worker_benchmark_sources
chain="$worker_chain"
echo "$(nproc) cores; 24 jobs (12 x 4608x3456, 12 x 2448x2448 JPEG), 3 outputs each"
echo "| slots | wall (s) | jobs/s | peak memory (MB) |"
echo "|---:|---:|---:|---:|"
for slots in 1 2 4; do
    rm -rf derive.sqlite* derived
    "$derive" submit k*.jpg a*.jpg --chain "$chain" > /dev/null 2>&1
    /usr/bin/time -f "%e %M" -o time.txt "$derive" work --until-idle --slots "$slots" 2> /dev/null
    read -r wall kilobytes < time.txt
    python3 -c "import sys; w, k = float(sys.argv[1]), int(sys.argv[2]); print(f'| $slots | {w:.2f} | {24 / w:.1f} | {k / 1024:.0f} |')" "$wall" "$kilobytes"
done
