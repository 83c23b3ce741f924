#!/usr/bin/env bash
# Installs what Derive needs on a fresh Debian 12 machine, builds it, and runs its main job on
# the embedded default — an SQLite queue (./derive.sqlite) and a local folder (./derived) — with
# the sample images in Samples/: submit a batch, work it, show where the outputs and metadata are.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}"
ensure_face_model
echo "==> building derive (release)"
swift build -c release --product derive
# The face detector's OpenCV half, beside derive, opened on the first face.
swift build -c release --product DeriveFaceNet
derive="$(swift build -c release --show-bin-path)/derive"

# libvips warns on stderr about harmless things a new user cannot act on (every AVIF it decodes
# says "heifload: ignoring nclx profile"); the demo shows only what Derive says.
export VIPS_WARNING=0

echo "==> submitting the sample images, each with the three outputs of Samples/web-outputs.json"
"$derive" submit Samples/*.jpg Samples/*.png --chain Samples/web-outputs.json

echo "==> working the queue until it is empty"
"$derive" work --until-idle

echo "==> the queue"
"$derive" status
"$derive" jobs list --state completed --limit 3

last=$("$derive" jobs list --state completed --limit 1 --json | sed -n 's/^    "id": \([0-9]*\),$/\1/p')
echo "==> one job, its outputs and their metadata (derive jobs show $last --json has all of it)"
"$derive" jobs show "$last"

echo "==> where things are"
echo "outputs:    $(pwd)/derived/<source sha256>/<output>-<identity>.<ext>"
echo "originals:  $(pwd)/derived/originals/"
echo "metadata:   $(pwd)/derive.sqlite (tables assets and derivatives; the jobs and their reports in job_archive)"
find derived -type f -newer Samples/web-outputs.json | sort | head -20
