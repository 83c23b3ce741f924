#!/usr/bin/env bash
# The queue benchmark: drains JOBS no-op jobs (default 100,000) through Derive's PostgreSQL queue
# (Benchmarks/QueueDrain, the real PostgresJobStore) and through pgqueuer (from PyPI, through its
# own Python API: Benchmarks/pgqueuer_peer.py), one after the other on the same throwaway
# PostgreSQL; then all of it again while another connection holds a transaction open (REPEATABLE
# READ, with a transaction id) for the whole run, which stops VACUUM from removing dead rows.
# Each figure is the median of REPEATS runs (default 3).
#
#   bash Benchmarks/queue.sh [JOBS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

jobs=${1:-100000}
repeats=${2:-3}

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" postgresql python3 python3-pip
ensure_python_modules pgqueuer=pgqueuer==1.6.0 asyncpg=asyncpg uvloop=uvloop
swift build -c release --product queue-drain > /dev/null
drain_tool=.build/release/queue-drain

work="$(mktemp -d)"
port=$(free_port)
holder=""
cleanup() {
    [ -n "$holder" ] && kill "$holder" 2> /dev/null
    stop_postgres "$work/pg"
    rm -rf "$work"
}
trap cleanup EXIT
# The server's defaults, except memory enough for the working set (as any production server has).
start_postgres "$work/pg" "$port" shared_buffers=512MB max_connections=100
sql() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres "$@"; }
sql -c "CREATE DATABASE derive_bench" -c "CREATE DATABASE pgqueuer_bench"
derive_url="postgresql://postgres@127.0.0.1:$port/derive_bench"
pgqueuer_url="postgresql://postgres@127.0.0.1:$port/pgqueuer_bench"
echo "PostgreSQL $(sql -Atc 'SHOW server_version') on $(nproc) cores; pgqueuer $(python3 -c 'import pgqueuer; print(pgqueuer.__version__)'); $jobs jobs, median of $repeats runs"

# hold DATABASE: a session that keeps a transaction (with a transaction id and a snapshot) open
# until unhold terminates it.
hold() {
    PGAPPNAME=derive-bench-holder psql -X -q -h 127.0.0.1 -p "$port" -U postgres -d "$1" \
        -c "BEGIN ISOLATION LEVEL REPEATABLE READ" -c "SELECT txid_current()" -c "SELECT count(*) FROM pg_class" \
        -c "SELECT pg_sleep(100000)" > /dev/null 2>&1 &
    holder=$!
    for _ in $(seq 50); do
        [ "$(sql -Atc "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'derive-bench-holder' AND backend_xid IS NOT NULL")" = 1 ] && return 0
        sleep 0.1
    done
    echo "the transaction holder did not start" >&2
    return 1
}
unhold() {
    sql -Atc "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'derive-bench-holder'" > /dev/null
    wait "$holder" 2> /dev/null || true
    holder=""
}

# derive CLAIMERS BATCH — one Derive drain; prints its JSON line.
derive() {
    "$drain_tool" submit --database "$derive_url" --jobs "$jobs" --batch 5000 > /dev/null
    sql -d derive_bench -c "ANALYZE derive.jobs"   # untimed, as the pgqueuer peer analyzes its table
    "$drain_tool" drain --database "$derive_url" --claimers "$1" --batch "$2"
}

pgqueuer() {
    python3 Benchmarks/pgqueuer_peer.py --dsn "$pgqueuer_url" --jobs "$jobs" --batch-size 10 --dequeuers 5 --timeout 1800
}

results="$work/results.jsonl"
for held in no yes; do
    for run in $(seq "$repeats"); do
        [ "$held" = yes ] && hold derive_bench
        echo "{\"held\":\"$held\",\"who\":\"derive 5x10\",\"r\":$(derive 5 10)}" >> "$results"
        echo "{\"held\":\"$held\",\"who\":\"derive 4x100\",\"r\":$(derive 4 100)}" >> "$results"
        [ "$held" = yes ] && { unhold; hold pgqueuer_bench; }
        echo "{\"held\":\"$held\",\"who\":\"pgqueuer 5x10\",\"r\":$(pgqueuer)}" >> "$results"
        [ "$held" = yes ] && unhold
        echo "  run $run ($( [ "$held" = yes ] && echo "transaction held open" || echo "no open transaction")) done"
    done
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def median(who, held, key):
    values = [r["r"][key] for r in rows if r["who"] == who and r["held"] == held and r["r"].get(key) is not None]
    return statistics.median(values) if values else None
print()
print("| queue (claimers x batch) | jobs/s | p50 claim-to-complete | p99 | jobs/s, transaction held open | change |")
print("|---|---:|---:|---:|---:|---:|")
for who in ["derive 5x10", "derive 4x100", "pgqueuer 5x10"]:
    free, held = median(who, "no", "jobs_per_second"), median(who, "yes", "jobs_per_second")
    lat = lambda q: (lambda v: f"{v:.1f} ms" if v is not None else "n/a")(
        statistics.median([r["r"]["claim_to_complete_ms"][q] for r in rows if r["who"] == who and r["held"] == "no"])
        if "claim_to_complete_ms" in rows[[r["who"] for r in rows].index(who)]["r"] else None)
    print(f"| {who} | {free:,.0f} | {lat('p50')} | {lat('p99')} | {held:,.0f} | {100 * (held - free) / free:+.0f}% |")
PY
