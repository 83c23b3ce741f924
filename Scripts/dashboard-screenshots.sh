#!/usr/bin/env bash
# Screenshots of the dashboard's main pages, for people to look at: a queue on the embedded
# SQLite default with the shared photographs and one job whose source carries a script, a
# worker draining it, and Debian's headless Chromium (driven by Tests/Browser/dashboard.py, the
# browser test's own script) saving the overview, that job's page, the failures page, the
# assets' contact sheet, an asset, the presets and a preset's versions, and the schedules.
# Usage: bash Scripts/dashboard-screenshots.sh [OUT_DIR]   (default Docs/dashboard)
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3 python3-pip chromium chromium-driver
ensure_python_modules selenium=selenium
out="$(mkdir -p "${1:-Docs/dashboard}" && cd "${1:-Docs/dashboard}" && pwd)"
fixtures="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"

swift build --product derive >/dev/null
derive="$(swift build --show-bin-path)/derive"
work="$(mktemp -d)"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
export DERIVE_DATABASE_URL="sqlite:$work/queue.sqlite" DERIVE_STORE="$work/store"
token="screenshots-token-$RANDOM$RANDOM"

# A preset, used, then changed (so the asset pages show stale outputs and the preset page a
# diff), and a schedule that reprocesses it.
"$derive" presets add cards --chain '{"outputs": [{"name": "card", "chain": "c_fill,w_480,h_320,g_auto/f_webp"}, {"name": "full", "chain": "c_scale,w_640"}]}' >/dev/null
"$derive" submit "$fixtures"/photos/*.jpg --preset cards >/dev/null
"$derive" work --slots 2 --until-idle 2> "$work/first-worker.log"
"$derive" presets add cards --chain '{"outputs": [{"name": "card", "chain": "c_fill,w_480,h_320,g_faces/f_webp"}, {"name": "full", "chain": "c_scale,w_640"}]}' >/dev/null
"$derive" schedule add nightly-cards --cron '0 3 * * *' --timezone Europe/Paris --reprocess cards --stale >/dev/null
"$derive" submit "$fixtures"/photos/*.jpg --chain 'c_fill,w_480,h_320,g_auto/f_webp' >/dev/null
# Refused before any connection (a loopback address): it fails, and its text must show as text.
failed=$("$derive" submit 'http://127.0.0.1:9/<script>window.pwned=1</script>.jpg' --chain 'c_scale,w_100' --max-attempts 1 --json \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')

DERIVE_DASHBOARD_TOKEN="$token" "$derive" dashboard --port 0 2> "$work/dashboard.log" &
pids+=($!)
for _ in $(seq 200); do grep -q 'listening on' "$work/dashboard.log" && break; sleep 0.05; done
url=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/dashboard.log" | head -1)
"$derive" work --slots 1 --until-idle 2> "$work/worker.log" &
pids+=($!)
python3 Tests/Browser/dashboard.py "$url" "$token" "$failed" "$out" >/dev/null
echo "screenshots in $out: $(cd "$out" && ls *.png | tr '\n' ' ')"
