#!/usr/bin/env bash
# Installs what Derive needs on a fresh Debian 12 machine, builds it, and runs its main job on
# the embedded default with the sample images in Samples/.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}"
echo "==> building derive (release)"
swift build -c release --product derive
derive="$(swift build -c release --show-bin-path)/derive"

echo "==> deriving three outputs from each sample image into ./derived (the JSON report follows)"
"$derive" run Samples/*.jpg Samples/*.png --chain Samples/web-outputs.json --out derived
echo "==> outputs:"
ls -l derived/*/
