#!/usr/bin/env bash
# Coverage-guided fuzzing of every input Derive reads from people it does not trust
# (Sources/DeriveFuzzTargets): libFuzzer, with Swift's address sanitizer.
#
#   bash Scripts/fuzz.sh [--seconds N] [target...]
#
# Builds `derive-fuzz` instrumented (into .build-fuzz), lays out each target's seed corpus
# (Cloudinary's strings of Benchmarks/language, the fixtures' images and Photoshop documents,
# Tests/Fuzz/seeds and every regression in Tests/Fuzz/regressions), and runs each target for N
# seconds (default 60). The corpus a run grows is kept in .build-fuzz/corpus and reused by the
# next run. A crash is written to .build-fuzz/crashes/<target>/ and the script exits 1: copy
# the file into Tests/Fuzz/regressions/<target>/, where FuzzCorpusTests replays it in every test
# run, and fix the trap. Targets: cloudinary json image psd multipart form delivery request.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

seconds=60
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds="$2"; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) targets+=("$1"); shift ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(cloudinary json image psd multipart form delivery request search)

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}"
fixtures="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
scratch=.build-fuzz
mkdir -p "$scratch"
# --sanitize=fuzzer makes SwiftPM link libFuzzer's main and instrument for coverage; the address
# sanitizer rides on swiftc's own flag (SwiftPM's two --sanitize flags together lose coverage).
echo "==> building derive-fuzz with libFuzzer and the address sanitizer ($scratch)"
swift build --product derive-fuzz --scratch-path "$scratch" --sanitize=fuzzer \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING > "$scratch/build.log" 2>&1 \
    || { tail -40 "$scratch/build.log" >&2; echo "fuzz.sh: building derive-fuzz failed (above)" >&2; exit 1; }
binary="$(swift build --product derive-fuzz --scratch-path "$scratch" --sanitize=fuzzer --show-bin-path)/derive-fuzz"

# One file a seed, named by its SHA-1 (libFuzzer's own naming), so that laying the seeds again
# adds nothing twice; at most `max_len` bytes of each (an image's readers look at its start).
# Arguments: the target, its max_len, then files: `lines:FILE` is one input a line (the first
# tab-separated column; # comments), `path:FILE/DELIVERY` each line as a delivery path in the
# URL forms the SDKs write, any other a file that is one input.
lay() {
    python3 - "$scratch/corpus" "$@" <<'PY'
import hashlib, os, sys
root, target, max_len, *sources = sys.argv[1:]
folder = os.path.join(root, target)
os.makedirs(folder, exist_ok=True)
def put(data):
    data = data[:int(max_len)]
    name = os.path.join(folder, hashlib.sha1(data).hexdigest())
    if not os.path.exists(name):
        with open(name, "wb") as out:
            out.write(data)
def lines(path):
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n").split("\t")[0] for l in f if l.strip() and not l.startswith("#")]
for source in sources:
    kind, _, path = source.partition(":") if source.startswith(("lines:", "paths:")) else ("file", "", source)
    if kind == "lines":
        for line in lines(path):
            put(line.encode())
    elif kind == "paths":
        for line in lines(path):
            put(f"{line}/v1/folder/sample.jpg".encode())
            put(f"s--abcdefgh--/{line}/sample.webp".encode())
    elif os.path.isfile(source):
        with open(source, "rb") as f:
            put(f.read())
PY
}

lay_seeds() {
    local target="$1"
    local regressions=(Tests/Fuzz/regressions/"$target"/*)
    case "$target" in
        cloudinary) lay cloudinary 4096 $(printf 'lines:%s ' Benchmarks/language/*.tsv Tests/Fuzz/seeds/cloudinary.txt) "${regressions[@]}" ;;
        delivery) lay delivery 4096 lines:Tests/Fuzz/seeds/delivery.txt paths:Benchmarks/language/documentation-examples.tsv \
            paths:Benchmarks/language/issue-examples.tsv paths:Tests/Fuzz/seeds/cloudinary.txt "${regressions[@]}" ;;
        json) lay json 16384 Samples/*.json Tests/Fuzz/seeds/json/* "${regressions[@]}" ;;
        image) lay image 65536 "$fixtures"/*/* Tests/Fixtures/*.jpg Tests/Fixtures/formats/* "${regressions[@]}" ;;
        psd) lay psd 1048576 Tests/Fixtures/psd/* "${regressions[@]}" ;;
        multipart|form|request) lay "$target" 65536 Tests/Fuzz/seeds/"$target"/* "${regressions[@]}" ;;
        search) lay search 4096 lines:Tests/Fuzz/seeds/search.txt "${regressions[@]}" ;;
        *) echo "fuzz.sh: no target $target (cloudinary json image psd multipart form delivery request search)" >&2; exit 2 ;;
    esac
}

# The longest input libFuzzer makes, per target (seeds longer than this are cut to it).
max_len() {
    case "$1" in
        cloudinary|delivery|search) echo 4096 ;;
        json) echo 16384 ;;
        psd) echo 1048576 ;;
        *) echo 65536 ;;
    esac
}

status=0
summary=()
for target in "${targets[@]}"; do
    lay_seeds "$target"
    crashes="$scratch/crashes/$target"
    mkdir -p "$crashes"
    log="$scratch/$target.log"
    echo "==> fuzzing $target for ${seconds}s ($(ls "$scratch/corpus/$target" | wc -l) inputs in its corpus)"
    # -rss_limit_mb and -timeout: an input that takes more than 2 GiB or 10 s is a finding too
    # (the libFuzzer default for memory; a job's own limits are tighter than either).
    set +e
    DERIVE_FUZZ_TARGET="$target" SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 \
        "$binary" -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$crashes/" "$scratch/corpus/$target" > "$log" 2>&1
    rc=$?
    set -e
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}')
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
    found=$(find "$crashes" -type f | wc -l)
    summary+=("$(printf '%-11s %9s runs  cov %6s  crashes %s' "$target" "$runs" "${cov:-?}" "$found")")
    if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
        status=1
        echo "fuzz.sh: $target found a crash (exit $rc); the input is in $crashes, the log in $log:" >&2
        grep -m5 -E 'Fatal error|ERROR: |SUMMARY' "$log" >&2 || tail -20 "$log" >&2
    fi
done
echo "==> fuzzing: ${seconds}s a target"
printf '%s\n' "${summary[@]}"
exit $status
