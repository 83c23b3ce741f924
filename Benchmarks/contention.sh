#!/usr/bin/env bash
# Does one worker with N slots keep up with N single-slot workers? The issue behind it: on a
# 16-core machine one worker with 16 slots ran 53 jobs/s against 61 for 16 processes (0.87x);
# suspects were the two glibc malloc arenas Derive then forced on every process, the
# completion path and SQLite's single writer. This runs the worker benchmark's jobs (24 JPEGs
# of 16 and 6 megapixels, each to a 2048 px JPEG, a 1024 px WebP and a 320 px WebP, reuse off)
# on the embedded default three ways, alternating, ROUNDS times each (default 3): one
# `derive work --slots N` (one malloc arena per slot, the default); N processes with
# `--slots 1` on the same queue; and one `--slots N` with the old two arenas
# (MALLOC_ARENA_MAX=2). Wall time and peak resident memory (GNU time; summed over processes).
# N is the core count unless given.
#
#   bash Benchmarks/contention.sh [N] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3 time
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
    rm -rf derive.sqlite* derived memory.*
    "$derive" submit k*.jpg a*.jpg --chain "$chain" > /dev/null 2>&1
}
# Runs `derive work --until-idle` in COUNT processes of SLOTS slots; prints "seconds megabytes".
run() {
    local count=$1 slots=$2 start
    start=$(date +%s.%N)
    for i in $(seq "$count"); do
        /usr/bin/time -f "%M" -o "memory.$i" "$derive" work --until-idle --slots "$slots" 2> /dev/null &
    done
    wait
    python3 -c "import glob, sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}', sum(int(open(f).read().split()[-1]) for f in glob.glob('memory.*')) // 1024)" "$start" "$(date +%s.%N)"
}
declare -A seen
load="$(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
    fresh; seen[slots]+="$(run 1 "$slots"),"
    fresh; seen[processes]+="$(run "$slots" 1),"
    fresh; seen[two]+="$(MALLOC_ARENA_MAX=2 run 1 "$slots"),"
done
echo "$(nproc) cores, load before: $load; 24 jobs, 3 outputs each; $rounds rounds (median)"
python3 - "$slots" "${seen[slots]}" "${seen[processes]}" "${seen[two]}" <<'PY'
import statistics, sys
n = sys.argv[1]
def parse(text):
    runs = [tuple(map(float, r.split())) for r in text.strip(",").split(",")]
    return [r[0] for r in runs], [r[1] for r in runs]
rows = [(f"one worker, --slots {n} ({max(2, int(n))} arenas, the default)", sys.argv[2]),
        (f"{n} workers, --slots 1 each (2 arenas each)", sys.argv[3]),
        (f"one worker, --slots {n}, MALLOC_ARENA_MAX=2 (the old default)", sys.argv[4])]
base = statistics.median(parse(sys.argv[3])[0])
print("| run | wall (s) | each round | jobs/s | vs processes | peak memory (MB) |")
print("|---|---:|---|---:|---:|---:|")
for name, text in rows:
    walls, memory = parse(text)
    median = statistics.median(walls)
    print(f"| {name} | {median:.2f} | {' '.join(f'{w:.2f}' for w in walls)} | {24 / median:.2f} | {base / median:.2f}x | {statistics.median(memory):.0f} |")
PY
