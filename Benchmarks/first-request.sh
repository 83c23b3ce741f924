#!/usr/bin/env bash
# The first request for a derivative not yet made (issue 39, item 5): `derive serve` on
# SQLite working its own queue, or on PostgreSQL with a separate `derive work`; a 16 MP camera
# photo of the shared fixtures uploaded; ROUNDS signed URLs of new transformations timed
# against the job's own time from its report (Benchmarks/first_request.py says how); then
# CONCURRENT requests at once for one new derivative, and how many jobs they made.
#
#   bash Benchmarks/first-request.sh [ROUNDS] [CONCURRENT] [postgresql://...]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

rounds=${1:-20}
concurrent=${2:-8}
postgres=${3:-}
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3
ensure_python_modules cloudinary=cloudinary==1.46.3
derive="${DERIVE_BINARY:-}"
if [ -z "$derive" ]; then
    swift build -c release --product derive > /dev/null
    derive="$(swift build -c release --show-bin-path)/derive"
fi
photo="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}/photos/kodak-pixpro-az521.jpg"

work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
    wait 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export DERIVE_CLOUD_NAME=bench DERIVE_API_KEY=bench-key DERIVE_API_SECRET=bench-secret-0123456789
database="sqlite:$work/q.sqlite"
if [ -n "$postgres" ]; then
    database="$postgres"
    "$derive" migrate --database "$database" > /dev/null
    "$derive" work --database "$database" --store "$work/store" 2> "$work/work.log" &
    pids+=($!)
fi
port=$(free_port)
"$derive" serve --port "$port" --database "$database" --store "$work/store" --wait 600 2> "$work/serve.log" &
pids+=($!)
for _ in $(seq 100); do grep -q "listening" "$work/serve.log" 2> /dev/null && break; sleep 0.1; done
echo "derive serve ($derive) on $(nproc) cores, $( [ -n "$postgres" ] && echo "PostgreSQL and a derive work process" || echo "SQLite, working the queue in process")"
python3 Benchmarks/first_request.py "$port" "$database" "$photo" "$rounds" "$concurrent"
