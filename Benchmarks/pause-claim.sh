#!/usr/bin/env bash
# What the pause check (migration 0010) costs a claim: derive.claim as migration 0010 writes it
# (a paused queue is not read) against the same function as 0001 wrote it (kept beside it as
# derive.claim_0001), on one throwaway PostgreSQL, each timed on the same fresh queue of
# JOBS available jobs (VACUUMed), CLAIMS claims of 10 jobs in one session, the two alternating
# for ROUNDS rounds. Prints each round and the medians, in microseconds per claim; also one
# round of the 0010 function with another queue paused (its row in derive.paused_queues).
#
#   bash Benchmarks/pause-claim.sh [JOBS] [CLAIMS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

jobs=${1:-20000}
claims=${2:-1000}
rounds=${3:-5}

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" postgresql
swift build --product derive > /dev/null
derive=.build/debug/derive

work="$(mktemp -d)"
port=$(free_port)
cleanup() {
    stop_postgres "$work/pg"
    rm -rf "$work"
}
trap cleanup EXIT
start_postgres "$work/pg" "$port" shared_buffers=256MB
sql() { psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres -d postgres "$@"; }
url="postgresql://postgres@127.0.0.1:$port/postgres"
"$derive" migrate --database "$url" > /dev/null

# derive.claim as 0001 wrote it, under another name.
python3 - "$work/claim_0001.sql" <<'EOF'
import sys
text = open("Migrations/0001_queue.sql").read()
start = text.index("CREATE FUNCTION derive.claim(")
end = text.index("END $$;", start) + len("END $$;")
body = text[start:end].replace("CREATE FUNCTION derive.claim(", "CREATE FUNCTION derive.claim_0001(", 1)
body = body.replace("claim.", "claim_0001.")
open(sys.argv[1], "w").write(body + "\n")
EOF
sql -f "$work/claim_0001.sql"

segments='[{"ord": 0, "queue": "default", "lo": -2147483648, "hi": 2147483647}]'
# time FUNCTION: fresh jobs, VACUUM, then CLAIMS claims of 10 in one session; microseconds per claim.
time_claims() {
    sql -c "TRUNCATE derive.jobs" \
        -c "INSERT INTO derive.jobs (payload) SELECT '{\"version\": 1, \"source\": \"https://images.example/a.jpg\", \"preset\": \"web\"}'::jsonb FROM generate_series(1, $jobs)"
    sql -c "VACUUM ANALYZE derive.jobs"
    sql -At -c "
        DO \$\$
        DECLARE started timestamptz := clock_timestamp();
        BEGIN
            FOR i IN 1..$claims LOOP
                PERFORM * FROM $1(ARRAY['default'], 10, 'bench', 30, '$segments'::jsonb);
            END LOOP;
            RAISE NOTICE '%', round(extract(epoch FROM clock_timestamp() - started) * 1e6 / $claims);
        END \$\$" 2>&1 | sed -n 's/.*NOTICE: *//p'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "PostgreSQL $(sql -Atc 'SHOW server_version') on $(nproc) cores; $jobs jobs, $claims claims of 10 per round, $rounds rounds"
old=() new=()
for round in $(seq "$rounds"); do
    o=$(time_claims derive.claim_0001)
    n=$(time_claims derive.claim)
    old+=("$o")
    new+=("$n")
    echo "round $round: 0001 $o us, 0010 $n us per claim"
done
sql -c "INSERT INTO derive.paused_queues (queue, paused_by) VALUES ('other', 'bench')"
paused=$(time_claims derive.claim)
echo "median: 0001 $(printf '%s\n' "${old[@]}" | median) us, 0010 $(printf '%s\n' "${new[@]}" | median) us per claim of 10"
echo "0010 with another queue paused: $paused us per claim"
sql -c "INSERT INTO derive.paused_queues (queue, paused_by) VALUES ('default', 'bench')"
claimed=$(sql -At -c "SELECT count(*) FROM derive.claim(ARRAY['default'], 10, 'bench', 30, '$segments'::jsonb)")
echo "0010 with the queue itself paused: $claimed jobs claimed"
