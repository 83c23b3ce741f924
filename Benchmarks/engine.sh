#!/usr/bin/env bash
# Derive's engine side by side with vipsthumbnail, Pillow (draft) and ImageMagick, on the
# shared fixture photos, in one run. Prints wall time and peak memory per tool and scenario:
#   one:   one 400 px JPEG (q80) per source
#   three: 320 px WebP, 1024 px JPEG, 2048 px WebP (q80) per source
# and the peak memory of each tool on the 16-megapixel photo alone (scenario three).
# Usage: bash Benchmarks/engine.sh [repeats]   (default 5: every photo processed 5 times)
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" libvips-tools imagemagick python3-pip time
ensure_python_modules PIL=pillow

repeats="${1:-5}"
photos_dir="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}/photos"
mapfile -t photos < <(ls "$photos_dir"/*.jpg)
big="$photos_dir/kodak-pixpro-az521.jpg"
swift build -c release --product derive >/dev/null
derive="$(swift build -c release --show-bin-path)/derive"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The photo list repeated, for tools that take many files in one process.
batch=()
for _ in $(seq "$repeats"); do batch+=("${photos[@]}"); done
count=${#batch[@]}

three='{"outputs": [{"name": "s", "chain": "c_limit,w_320,h_320", "format": "webp", "quality": 80},
  {"name": "m", "chain": "c_limit,w_1024,h_1024", "format": "jpeg", "quality": 80},
  {"name": "l", "chain": "c_limit,w_2048,h_2048", "format": "webp", "quality": 80}]}'

# measure NAME COMMAND...: runs it, records wall seconds and peak resident kilobytes.
declare -A wall peak
measure() {
    local name=$1; shift
    local out="$work/time"
    /usr/bin/time -f "%e %M" -o "$out" "$@" >/dev/null 2>&1
    read -r wall[$name] peak[$name] < "$out"
}

# measure_each NAME COMMAND-TEMPLATE: one process per file ({} is the file, {n} a counter);
# sums the wall time and keeps the largest peak.
measure_each() {
    local name=$1 template=$2 total=0 maximum=0 n=0
    for file in "${batch[@]}"; do
        n=$((n + 1))
        local command=${template//\{\}/$file}
        command=${command//\{n\}/$n}
        /usr/bin/time -f "%e %M" -o "$work/time" bash -c "$command" >/dev/null 2>&1
        read -r seconds kilobytes < "$work/time"
        total=$(python3 -c "print($total + $seconds)")
        [ "$kilobytes" -gt "$maximum" ] && maximum=$kilobytes
    done
    wall[$name]=$total
    peak[$name]=$maximum
}

run_scenarios() {
    local files=("$@")
    mkdir -p "$work/d" "$work/v" "$work/p" "$work/m"
    # (a) one 400 px JPEG per source
    measure one_derive "$derive" run "${files[@]}" --chain 'c_limit,w_400,h_400/f_jpg,q_80' --out "$work/d"
    measure one_vipsthumbnail vipsthumbnail "${files[@]}" -s 400 -o "$work/v/%s.jpg[Q=80,strip]"
    measure one_pillow python3 Benchmarks/pillow_peer.py one "$work/p" 1 "${files[@]}"
    # (b) three outputs per source
    measure three_derive "$derive" run "${files[@]}" --chain "$three" --out "$work/d"
    local start end
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$work/t1" vipsthumbnail "${files[@]}" -s 320 -o "$work/v/%s_s.webp[Q=80,strip]" >/dev/null 2>&1
    /usr/bin/time -f "%M" -o "$work/t2" vipsthumbnail "${files[@]}" -s 1024 -o "$work/v/%s_m.jpg[Q=80,strip]" >/dev/null 2>&1
    /usr/bin/time -f "%M" -o "$work/t3" vipsthumbnail "${files[@]}" -s 2048 -o "$work/v/%s_l.webp[Q=80,strip]" >/dev/null 2>&1
    end=$(date +%s.%N)
    wall[three_vipsthumbnail]=$(python3 -c "print(round($end - $start, 2))")
    peak[three_vipsthumbnail]=$(cat "$work/t1" "$work/t2" "$work/t3" | sort -n | tail -1)
    measure three_pillow python3 Benchmarks/pillow_peer.py three "$work/p" 1 "${files[@]}"
}

echo "Photos: ${#photos[@]} JPEGs from $photos_dir, each processed $repeats times ($count sources per run)."
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); libvips $(vips --version | cut -d- -f2)."
echo
run_scenarios "${batch[@]}"
measure_each one_imagemagick "convert-im6.q16 '{}' -thumbnail 400x400 -strip -quality 80 $work/m/{n}.jpg"
measure_each three_imagemagick "convert-im6.q16 '{}' -strip -quality 80 \
  \\( +clone -thumbnail 320x320 -write $work/m/{n}_s.webp +delete \\) \
  \\( +clone -thumbnail 1024x1024 -write $work/m/{n}_m.jpg +delete \\) \
  -thumbnail 2048x2048 $work/m/{n}_l.webp"

report() {
    local scenario=$1 title=$2
    echo "### $title"
    echo
    echo "| tool | wall (s) | per source (ms) | peak memory (MB) | vs Derive |"
    echo "|---|---|---|---|---|"
    for tool in derive vipsthumbnail pillow imagemagick; do
        local w=${wall[${scenario}_$tool]} m=${peak[${scenario}_$tool]}
        python3 -c "
w, m, d = $w, $m, ${wall[${scenario}_derive]}
print(f'| $tool | {w:.2f} | {w / $count * 1000:.1f} | {m / 1024:.0f} | {w / d:.2f}x |')"
    done
    echo
}
report one "(a) one 400 px JPEG per source"
report three "(b) 320 px WebP + 1024 px JPEG + 2048 px WebP per source"

echo "### Peak memory on the 16-megapixel photo alone (scenario b)"
echo
batch=("$big")
count=1
run_scenarios "$big"
measure_each three_imagemagick "convert-im6.q16 '{}' -strip -quality 80 \
  \\( +clone -thumbnail 320x320 -write $work/m/{n}_s.webp +delete \\) \
  \\( +clone -thumbnail 1024x1024 -write $work/m/{n}_m.jpg +delete \\) \
  -thumbnail 2048x2048 $work/m/{n}_l.webp"
echo "| tool | peak memory (MB) |"
echo "|---|---|"
for tool in derive vipsthumbnail pillow imagemagick; do
    python3 -c "print(f'| $tool | {${peak[three_$tool]} / 1024:.0f} |')"
done
