#!/usr/bin/env bash
# pg_name: on hostile Photoshop documents (small files whose layers cost far more to decode and
# composite than their size says): each case's file size, the seconds and peak memory of
# `derive run <psd> --chain 'pg_name:<layers>/f_png'` (release build), and how it ended (made,
# or the error's code). Figures in Benchmarks/RESULTS.md (the PSD section).
# Usage: bash Benchmarks/psd/hostile.sh
#   DERIVE_BIN=<a derive binary> runs that one instead of building (say, an older commit's, for
#   the figures before); each run is stopped after TIMEOUT seconds (default 120).
set -euo pipefail
cd "$(dirname "$0")/../.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" time
derive="${DERIVE_BIN:-}"
if [ -z "$derive" ]; then
  swift build -c release --product derive >/dev/null
  derive="$(swift build -c release --show-bin-path)/derive"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# name, hostile.py arguments, the layers named
cases=(
  "clipbase-10|clipbase 10 10000|G"
  "clipbase-9000|clipbase 9000 10000|G"
  "vmsk-2000-empty|vmsk 2000 4000|v"
  "vmsk-300-triangles|vshapes 300 4000|v"
  "vmsk-25-triangles|vshapes 25 4000|v"
  "groups-30|groups 30 4000|$(seq -s ';' -f 'c%g' 0 29)"
  "full-10|full 10 4000|$(seq -s ';' -f 'f%g' 0 9)"
  "full-11|full 11 4000|$(seq -s ';' -f 'f%g' 0 10)"
  "full-1|full 1 4000|f0"
)
printf '%-20s %10s %9s %10s  %s\n' case bytes seconds "peak MiB" outcome
for c in "${cases[@]}"; do
  IFS='|' read -r name args layers <<<"$c"
  psd="$work/$name.psd"
  # shellcheck disable=SC2086
  python3 Benchmarks/psd/hostile.py $args "$psd"
  chain="$work/$name.json"
  python3 -c 'import json,sys; print(json.dumps({"chain": "pg_name:" + sys.argv[1] + "/f_png"}))' "$layers" >"$chain"
  status=0
  /usr/bin/time -f '%e %M' -o "$work/time" timeout "${TIMEOUT:-120}" "$derive" run "$psd" --chain "$chain" --out "$work/out" >"$work/report" 2>"$work/err" || status=$?
  read -r seconds kib < <(tail -1 "$work/time")
  if [ "$status" = 0 ]; then outcome=made; elif [ "$status" = 124 ]; then outcome="stopped after ${TIMEOUT:-120} s"; else outcome="$(grep -oE ': [a-z]+(_[a-z]+)+: ' "$work/err" | head -1 | tr -d ': ')"; fi
  printf '%-20s %10d %9s %10d  %s\n' "$name" "$(stat -c %s "$psd")" "$seconds" "$((kib / 1024))" "${outcome:-failed ($status)}"
done
