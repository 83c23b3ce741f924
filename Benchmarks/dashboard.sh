#!/usr/bin/env bash
# The dashboard benchmark: a throwaway PostgreSQL seeded with JOBS archived jobs (default
# 100,000) and ASSETS assets (default 10,000, each with 3 to 6 derivatives, some superseded or
# stale) by Benchmarks/dashboard-seed.sql, `derive dashboard` (release build) on it, and every
# page timed by Benchmarks/dashboard_pages.py: REPEATS requests each (default 20) after two
# warm-ups, one at a time. Fails if a page's 95th percentile is over 200 ms (issue 17's
# target). That no query scans the archive, the assets or the derivatives is checked by the
# test suite on every run (OperatorViewsPlanTests, AssetCatalogPlanTests).
#
#   bash Benchmarks/dashboard.sh [JOBS] [ASSETS] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

jobs=${1:-100000}
assets=${2:-10000}
repeats=${3:-20}

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" postgresql python3
swift build -c release --product derive > /dev/null
derive="$(swift build -c release --show-bin-path)/derive"

work="$(mktemp -d)"
port=$(free_port)
dashboard=""
cleanup() {
    [ -n "$dashboard" ] && kill "$dashboard" 2> /dev/null
    stop_postgres "$work/pg"
    rm -rf "$work"
}
trap cleanup EXIT
start_postgres "$work/pg" "$port" shared_buffers=512MB
sql() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d derive_bench "$@"; }
psql -X -q -h 127.0.0.1 -p "$port" -U postgres -c "CREATE DATABASE derive_bench"
url="postgresql://postgres@127.0.0.1:$port/derive_bench"
"$derive" migrate --database "$url" > /dev/null
started=$SECONDS
sql -v jobs="$jobs" -v assets="$assets" -f Benchmarks/dashboard-seed.sql > /dev/null
echo "PostgreSQL $(sql -Atc 'SHOW server_version') on $(nproc) cores; seeded in $((SECONDS - started)) s:" \
    "$(sql -Atc 'SELECT count(*) FROM derive.job_archive') archived jobs, $(sql -Atc 'SELECT count(*) FROM derive.assets') assets," \
    "$(sql -Atc 'SELECT count(*) FROM derive.derivatives') derivatives"

port_web=$(free_port)
"$derive" dashboard --database "$url" --port "$port_web" --store "$work/store" 2> "$work/dashboard.log" &
dashboard=$!
wait_for_port "$port_web" "derive dashboard"

job=$(sql -Atc "SELECT id FROM derive.job_archive WHERE outcome = 'failed' ORDER BY finished_at DESC LIMIT 1")
code=$(sql -Atc "SELECT errors->-1->>'code' FROM derive.job_archive WHERE outcome = 'failed' ORDER BY finished_at DESC LIMIT 1")
host=img3.example.com   # one of the seed's twelve web hosts (a twelfth of three quarters of the jobs)
asset=$(sql -Atc "SELECT id FROM derive.assets ORDER BY id DESC LIMIT 1")
older=$(sql -Atc "SELECT id FROM derive.assets ORDER BY id DESC OFFSET 5000 LIMIT 1")
preset=$(sql -Atc "SELECT name FROM derive.presets ORDER BY name LIMIT 1")
# A page deep in the archive: the cursor of the 50,000th newest job.
read -r before before_id < <(sql -Atc "SELECT extract(epoch FROM finished_at), id FROM derive.job_archive ORDER BY finished_at DESC, id DESC OFFSET 50000 LIMIT 1" | tr '|' ' ')

python3 Benchmarks/dashboard_pages.py "http://127.0.0.1:$port_web" "$repeats" 200 \
    / /live /totals "/totals?hours=1" /jobs "/jobs?outcome=failed" "/jobs?outcome=failed&code=$code" "/jobs?host=$host" "/jobs?hours=24" \
    "/jobs?before=$before&before_id=$before_id" "/jobs/$job" "/failures" "/failures?hours=720" \
    /assets "/assets?before=$older" "/assets/$asset" /presets "/presets/$preset" "/presets/$preset/reprocess" /schedules
