#!/usr/bin/env bash
# Does one worker with N slots keep up with N single-slot workers? The issue behind it: on a
# 16-core machine one worker with 16 slots ran 53 jobs/s against 61 for 16 processes (0.87x);
# suspects were the two glibc malloc arenas Derive forces, the completion path and SQLite's
# single writer. This runs the worker benchmark's jobs (24 JPEGs of 16 and 6 megapixels, each
# to a 2048 px JPEG, a 1024 px WebP and a 320 px WebP) on the embedded default three ways,
# alternating, ROUNDS times each (default 3): one `derive work --slots N`; N processes with
# `--slots 1` on the same queue; and one `--slots N` with glibc's own arena limit
# (MALLOC_ARENA_MAX=8N) instead of Derive's 2. N is the core count unless given.
#
#   bash Benchmarks/contention.sh [N] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3
swift build -c release --product derive > /dev/null
derive="$(swift build -c release --show-bin-path)/derive"
slots="${1:-$(nproc)}"
rounds="${2:-3}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
worker_benchmark_sources
chain="$worker_chain"

fresh() {
    rm -rf derive.sqlite* derived
    "$derive" submit k*.jpg a*.jpg --chain "$chain" > /dev/null 2>&1
}
now() { date +%s.%N; }
declare -A total
for round in $(seq "$rounds"); do
    fresh
    start=$(now)
    "$derive" work --until-idle --slots "$slots" 2> /dev/null
    total[slots]+=" $(python3 -c "print($(now) - $start)")"

    fresh
    start=$(now)
    for _ in $(seq "$slots"); do "$derive" work --until-idle --slots 1 2> /dev/null & done
    wait
    total[processes]+=" $(python3 -c "print($(now) - $start)")"

    fresh
    start=$(now)
    MALLOC_ARENA_MAX=$((8 * slots)) "$derive" work --until-idle --slots "$slots" 2> /dev/null
    total[arenas]+=" $(python3 -c "print($(now) - $start)")"
done
echo "$(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg); 24 jobs, 3 outputs each; $rounds rounds, median wall time"
python3 - "$slots" "${total[slots]}" "${total[processes]}" "${total[arenas]}" <<'PY'
import statistics, sys
n = sys.argv[1]
rows = [(f"one worker, --slots {n}", sys.argv[2]), (f"{n} workers, --slots 1 each", sys.argv[3]),
        (f"one worker, --slots {n}, MALLOC_ARENA_MAX={8 * int(n)}", sys.argv[4])]
base = statistics.median(float(x) for x in sys.argv[3].split())
print("| run | wall (s), median | each round | jobs/s | vs processes |")
print("|---|---:|---|---:|---:|")
for name, times in rows:
    values = [float(x) for x in times.split()]
    median = statistics.median(values)
    print(f"| {name} | {median:.2f} | {' '.join(f'{v:.2f}' for v in values)} | {24 / median:.2f} | {base / median:.2f}x |")
PY
