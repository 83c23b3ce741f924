#!/usr/bin/env bash
# Installs what Derive needs on a fresh Debian 12 machine, builds it, and runs its main job on
# the embedded default with the sample images in Samples/.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

ensure_swift
echo "==> building derive (release)"
swift build -c release --product derive
derive="$(swift build -c release --show-bin-path)/derive"

echo "==> planning three outputs for Samples/landscape-orientation-6.jpg (read from its header, nothing decoded)"
"$derive" explain --chain Samples/web-outputs.json Samples/landscape-orientation-6.jpg
