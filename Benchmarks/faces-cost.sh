#!/usr/bin/env bash
# What face detection costs a job, on one core:
#   1. a 12-megapixel photo (4000x3000, made from the shared 16 MP fixture) derived to a
#      400x400 crop with g_faces and with g_north, 12 times in one process each; the median
#      per-source time of each (the first source is left out: it creates the detector) and
#      the detection stage alone;
#   1c. per CenterFace canvas: detection's processor time, building it, peak resident memory;
#   1d. the detection stage split: the copy libvips makes, the network's input, the forward pass;
#   2. the whole-process cost of jobs that ask for no faces, with this build and with the
#      build before face detection (BASELINE, default d441a84), taking turns run after run.
# Usage: bash Benchmarks/faces-cost.sh [BASELINE-REVISION | --no-baseline]
#   --no-baseline leaves out section 2 (it builds the baseline revision, minutes the first time).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3-pip
ensure_python_modules PIL=pillow

baseline_rev="${1:-d441a84}"
fixtures="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

ensure_face_model
swift build -c release --product derive >/dev/null
swift build -c release --product DeriveFaceNet >/dev/null  # CenterFace's OpenCV half, beside derive
derive="$(swift build -c release --show-bin-path)/derive"
# The baseline's source and build stay in .build-baseline (ignored by git), at the same path
# run after run, so a second run does not build it again.
if [ "$baseline_rev" != "--no-baseline" ]; then
    scratch="$(pwd)/.build-baseline"
    source_dir="$scratch/source-$baseline_rev"
    git worktree prune
    [ -d "$source_dir" ] || git worktree add --detach "$source_dir" "$baseline_rev" >/dev/null 2>&1
    (cd "$source_dir" && swift build -c release --product derive --scratch-path "$scratch" >/dev/null)
    baseline="$scratch/release/derive"
fi

python3 - "$fixtures/photos/kodak-pixpro-az521.jpg" "$work/photo-12mp.jpg" <<'PY'
import sys
from PIL import Image
Image.open(sys.argv[1]).resize((4000, 3000), Image.LANCZOS).save(sys.argv[2], quality=90)
PY
photo="$work/photo-12mp.jpg"
export DERIVE_VIPS_CONCURRENCY=1

echo "== 1. a 400x400 crop of a 12 MP photo, one core, milliseconds per source (median of 11)"
sources=()
for _ in $(seq 12); do sources+=("$photo"); done
for gravity in faces north; do
    taskset -c 0 "$derive" run "${sources[@]}" --chain "c_fill,w_400,h_400,g_$gravity" --out "$work/out" > "$work/$gravity.json"
done
python3 - "$work/faces.json" "$work/north.json" <<'PY'
import json, statistics, sys
everything = json.load(open(sys.argv[1]))
faces, north = everything[1:], json.load(open(sys.argv[2]))[1:]
total = lambda rs: statistics.median(r["timings"]["total"] for r in rs)
f, n = total(faces), total(north)
d = statistics.median(r["timings"]["faces"] for r in faces)
first = everything[0]["timings"]["faces"]
detector = ((everything[0].get("source") or {}).get("faces") or {}).get("detector", "?")
print(f"detector: {detector}")
print(f"g_faces: {f:.1f} ms   g_north: {n:.1f} ms   difference: {f - n:.1f} ms   detection stage alone: {d:.1f} ms")
print(f"first source's detection stage (opens libDeriveFaceNet.so and reads the model, once per process): {first:.1f} ms, "
      f"so building the detector costs about {first - d:.1f} ms")
PY

echo
echo "== 1b. processor time (user + system) of the same 12 jobs, one core: less sensitive to a busy machine"
cpu() { /usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{print ($1 + $2) * 1000}'; }
north_cpu=$(cpu taskset -c 0 "$derive" run "${sources[@]}" --chain "c_fill,w_400,h_400,g_north" --out "$work/out")
one_north=$(cpu taskset -c 0 "$derive" run "$photo" --chain "c_fill,w_400,h_400,g_north" --out "$work/out")
for detector in centerface hog; do
    all=$(DERIVE_FACE_DETECTOR=$detector cpu taskset -c 0 "$derive" run "${sources[@]}" --chain "c_fill,w_400,h_400,g_faces" --out "$work/out")
    one=$(DERIVE_FACE_DETECTOR=$detector cpu taskset -c 0 "$derive" run "$photo" --chain "c_fill,w_400,h_400,g_faces" --out "$work/out")
    python3 -c "import sys; n, a, o1, on = map(float, sys.argv[1:5]); per = (a - n) / 12; after = ((a - n) - (o1 - on)) / 11; print(f'{sys.argv[5]}: detection {per:.0f} ms of processor time per 12 MP job ({after:.0f} ms per job after the first, building left out); building the detector about {(o1 - on) - per:.0f} ms once per process')" \
        "$north_cpu" "$all" "$one" "$one_north" "$detector"
done

echo
echo "== 1c. per CenterFace canvas (DERIVE_FACE_DETECTION_CANVAS): processor time of detection per 12 MP job,"
echo "       building the detector once per process, and the process's peak resident memory (12 jobs)"
# Canvases as in Benchmarks/faces/netsizes.py, whose accuracy on both halves of the set goes with these.
measure() { /usr/bin/time -f "%U %S %M" "$@" 2>&1 >/dev/null | tail -1; }
for canvas in ${DERIVE_FACE_CANVASES:-1024x1024 768x576 640x480 576x416}; do
    export DERIVE_FACE_DETECTION_CANVAS=$canvas DERIVE_FACE_DETECTOR=centerface
    all=$(measure taskset -c 0 "$derive" run "${sources[@]}" --chain "c_fill,w_400,h_400,g_faces" --out "$work/out")
    one=$(measure taskset -c 0 "$derive" run "$photo" --chain "c_fill,w_400,h_400,g_faces" --out "$work/out")
    unset DERIVE_FACE_DETECTION_CANVAS DERIVE_FACE_DETECTOR
    python3 -c "
import sys
n, on = float(sys.argv[1]), float(sys.argv[2])
u, s, rss = map(float, sys.argv[3].split()); u1, s1, _ = map(float, sys.argv[4].split())
per = ((u + s) * 1000 - n) / 12
after = (((u + s) * 1000 - n) - ((u1 + s1) * 1000 - on)) / 11
print(f'{sys.argv[5]}: detection {per:.0f} ms of processor time per 12 MP job ({after:.0f} ms per job after the first, building left out); building about {((u1 + s1) * 1000 - on) - per:.0f} ms; peak RSS {rss / 1024:.0f} MiB')" \
        "$north_cpu" "$one_north" "$all" "$one" "$canvas"
done

echo
echo "== 1d. where the detection stage goes (DERIVE_FACE_PROFILE), per canvas: median of 11 jobs, milliseconds;"
echo "       the copy's stages are processor time of the process, the network's of its thread"
for canvas in ${DERIVE_FACE_CANVASES:-1024x1024 768x576 640x480 576x416}; do
    DERIVE_FACE_PROFILE=1 DERIVE_FACE_DETECTOR=centerface DERIVE_FACE_DETECTION_CANVAS=$canvas taskset -c 0 "$derive" run "${sources[@]}" \
        --chain "c_fill,w_400,h_400,g_faces" --out "$work/out" 2> "$work/profile.txt" > "$work/profiled.json"
    python3 - "$work/profile.txt" "$work/profiled.json" "$work/north.json" "$canvas" <<'PY'
import json, statistics, sys
lines = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith("derive-face-profile ")][1:]  # the first builds the network
rows = [dict(field.split("=", 1) for field in line) for line in lines]
print(f"{sys.argv[4]}: decoded {rows[0]['source']}, detector's copy {rows[0]['copy']}")
median = lambda key: statistics.median(float(r[key]) for r in rows)
parts = [("libvips copy (colour, resample)", "resample"), ("pixels out of libvips", "pixels"),
         ("network input (blob)", "blob"), ("forward pass", "forward"), ("boxes", "boxes")]
for label, key in parts:
    print(f"  {label:34s} {median(key + '_cpu'):7.2f} ms processor  {median(key + '_wall'):7.2f} ms wall")
print(f"  {'the stage, all of it':34s} {median('resample_cpu') + median('pixels_cpu') + median('detector_cpu'):7.2f} ms processor  "
      f"{median('resample_wall') + median('pixels_wall') + median('detector_wall'):7.2f} ms wall")
decode = lambda path: statistics.median(r["timings"]["decode"] for r in json.load(open(path))[1:])
print(f"  the job's decode (wall, shared by every output): {decode(sys.argv[2]):.1f} ms with g_faces, {decode(sys.argv[3]):.1f} ms with g_north")
PY
done

[ "$baseline_rev" = "--no-baseline" ] && exit 0
echo
echo "== 2. whole process, jobs that ask for no faces: before face detection ($baseline_rev) and now"
web="$work/web.json"
cat > "$web" <<'JSON'
{"outputs": [{"name": "thumb", "chain": "c_fill,w_200,h_200,g_center", "format": "webp", "quality": 80},
             {"name": "card", "chain": "c_fill,w_600,h_315,g_north", "format": "jpeg", "quality": 80},
             {"name": "full", "chain": "c_limit,w_2048,h_2048", "format": "jpeg", "quality": 85}]}
JSON
# The two builds take turns, run after run, so a change in the machine's load touches both alike.
python3 - "$baseline" "$derive" "$photo" "$web" "$work" <<'PY'
import statistics, subprocess, sys, time
baseline, derive, photo, web, work = sys.argv[1:6]
cases = [("12 MP photo, 3 outputs (thumb, card, full)", [photo, "--chain", web]),
         ("the portrait, one 400 px JPEG", ["Samples/grace-hopper.jpg", "--chain", "c_limit,w_400/f_jpeg"])]
for name, arguments in cases:
    times = {"before": [], "now": []}
    for run in range(22):
        for label, binary in (("before", baseline), ("now", derive)):
            started = time.perf_counter()
            subprocess.run(["taskset", "-c", "0", binary, "run", *arguments, "--out", f"{work}/{label}"], check=True,
                           stdout=subprocess.DEVNULL)
            if run >= 2:  # the first two warm the file cache
                times[label].append((time.perf_counter() - started) * 1000)
    b, n = statistics.median(times["before"]), statistics.median(times["now"])
    print(f"{name}: before {b:.1f} ms, now {n:.1f} ms (median of 20 each, alternating): {100 * (n - b) / b:+.1f}%")
PY
