#!/usr/bin/env bash
# e_vectorize to SVG: time and bytes per fixture (issue 30). For each image and chain, derive run
# (release build) is run `repeats` times; printed are the median time of the trace (the output's
# encode stage: shrink, quantise, potrace, document), the median wall time of the whole run, the
# SVG's bytes and its paths (from the output's choices); a trace past the output's bounds (60,000
# paths, 16 MiB) is refused, and printed so.
# Usage: bash Benchmarks/vectorize.sh [repeats]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}"

repeats="${1:-5}"
fixtures="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
images=(photos/grace_hopper_noexif.jpg formats/svg-logo.svg photos/coffee_noexif.png photos/kodak-pixpro-az521.jpg)
chains=("e_vectorize:8/f_svg" "e_vectorize:colors:8:detail:1000/f_svg" "e_vectorize:colors:30:detail:1000:despeckle:0/f_svg")
swift build -c release --product derive >/dev/null
derive="$(swift build -c release --show-bin-path)/derive"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

printf '%-36s %-52s %9s %9s %9s %7s\n' image chain "trace ms" "run ms" bytes paths
for image in "${images[@]}"; do
    for chain in "${chains[@]}"; do
        refused=""
        for i in $(seq "$repeats"); do
            start=$(date +%s%N)
            if ! "$derive" run "$fixtures/$image" --chain "$chain" --allow-loader svg --out "$work/out" > "$work/report-$i.json" 2> "$work/error"; then
                refused=$(grep -o 'limit_exceeded: .*' "$work/error" | head -1)
                break
            fi
            echo $(( ($(date +%s%N) - start) / 1000000 )) > "$work/wall-$i"
        done
        if [ -n "$refused" ]; then
            printf '%-36s %-52s refused: %s\n' "$image" "$chain" "${refused:0:90}"
            continue
        fi
        python3 - "$work" "$repeats" "$image" "$chain" <<'PY'
import json, re, statistics, sys
work, repeats, image, chain = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
encode, wall = [], []
for i in range(1, repeats + 1):
    output = json.load(open(f"{work}/report-{i}.json"))[0]["outputs"][0]
    encode.append(output["timings"]["encode"])
    wall.append(int(open(f"{work}/wall-{i}").read()))
paths = re.search(r"(\d+) paths", output["choices"][0]).group(1)
print(f"{image:36} {chain:52} {statistics.median(encode):9.1f} {statistics.median(wall):9.0f} {output['bytes']:9} {paths:>7}")
PY
    done
done
