#!/usr/bin/env bash
# SSIMULACRA 2's whole-image check (q_auto's score of its output on the whole image) in C alone,
# part by part, for each copy of the kernels this CPU runs: Benchmarks/metric_kernels.c built
# against Sources/CMetricKernels, on a 1200x800 crop of a fixture photograph and its JPEG at
# quality 66 (about what q_auto:good picks for it). Results: Benchmarks/RESULTS.md.
# With --before COMMIT, the kernels of that commit too (354434b or earlier: rows passed first), built
# from `git show` into the scratch directory and measured the same way first.
# Then checks that the harness's score is `derive score`'s for the same pair (DERIVE_BINARY, else a
# release build).
# Usage: bash Benchmarks/metric_kernels.sh [ROUNDS] [--before COMMIT]   (DERIVE_FIXTURES: the fixtures)
set -euo pipefail
cd "$(dirname "$0")/.."
fixtures="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
rounds=30
before=""
while [ $# -gt 0 ]; do
    case "$1" in
        --before) before="$2"; shift 2 ;;
        *) rounds="$1"; shift ;;
    esac
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$fixtures/photos/kodak-pixpro-az521.jpg" "$work" <<'PY'
import io, sys
from PIL import Image
source, work = sys.argv[1], sys.argv[2]
image = Image.open(source).convert("RGB")
w, h = image.size
side = min(w, h) // 2
image = image.crop((w // 5, h // 5, w // 5 + side, h // 5 + side)).resize((1200, 800), Image.LANCZOS)
open(f"{work}/reference.rgb", "wb").write(image.tobytes())
encoded = io.BytesIO()
image.save(encoded, "JPEG", quality=66)
distorted = Image.open(io.BytesIO(encoded.getvalue())).convert("RGB")
open(f"{work}/distorted.rgb", "wb").write(distorted.tobytes())
image.save(f"{work}/reference.png")
distorted.save(f"{work}/distorted.png")
PY
# Ssimulacra2.swift's weights (the lines between `static let weights: [Double] = [` and `]`).
sed -n '/static let weights: \[Double\] = \[/,/^    \]/p' Sources/DeriveLanguage/Pixels/Ssimulacra2.swift | sed '1d;$d' > "$work/weights.inc"
[ "$(tr ',' '\n' < "$work/weights.inc" | grep -c '[0-9]')" = 108 ] || { echo "metric_kernels.sh: could not read 108 weights from Ssimulacra2.swift" >&2; exit 1; }
if [ -n "$before" ]; then
    mkdir -p "$work/before/include"
    for file in $(git ls-tree -r --name-only "$before" Sources/CMetricKernels); do
        git show "$before:$file" > "$work/before/${file#Sources/CMetricKernels/}"
    done
    clang -O3 -DKERNELS_BEFORE_ROW_FIRST -I"$work" -I"$work/before/include" -I"$work/before" Benchmarks/metric_kernels.c "$work"/before/*.c -lm \
        -o "$work/metric_kernels_before"
    "$work/metric_kernels_before" "$work/reference.rgb" "$work/distorted.rgb" 1200 800 "$rounds"
fi
kernels=Sources/CMetricKernels
clang -O3 -I"$work" -I"$kernels/include" -I"$kernels" Benchmarks/metric_kernels.c "$kernels"/*.c -lm -o "$work/metric_kernels"
best=$("$work/metric_kernels" "$work/reference.rgb" "$work/distorted.rgb" 1200 800 1 | sed -n 's/.*kernels \(.*\), fastest.*/\1/p')
for copy in 0 1 2; do
    "$work/metric_kernels" "$work/reference.rgb" "$work/distorted.rgb" 1200 800 "$rounds" "$copy"
    case "$best" in baseline) break ;; x86-64-v3*) [ "$copy" -ge 1 ] && break ;; esac
done
# The harness reads libjxl's weights from, and repeats the score's combination of,
# Sources/DeriveLanguage/Pixels/Ssimulacra2.swift: `derive score` of the same pair (lossless PNGs
# of the same pixels) must give the same score, or the harness times something else.
if [ -z "${DERIVE_BINARY:-}" ]; then
    swift build -c release --product derive >/dev/null
    DERIVE_BINARY="$(swift build -c release --show-bin-path)/derive"
fi
harness=$("$work/metric_kernels" "$work/reference.rgb" "$work/distorted.rgb" 1200 800 1 | sed -n 's/.*score \([0-9.-]*\)$/\1/p')
derived=$("$DERIVE_BINARY" score "$work/reference.png" "$work/distorted.png" | grep -Eo '[0-9]+\.[0-9]+' | head -1)
python3 - "$harness" "$derived" <<'PY'
import sys
harness, derived = float(sys.argv[1]), float(sys.argv[2])
agree = abs(harness - derived) <= 0.01
print(f"the harness's score {harness:.4f}, derive score's {derived:.4f}: {'the same metric' if agree else 'DIFFERENT: the harness no longer matches Ssimulacra2.swift'}")
sys.exit(0 if agree else 1)
PY
