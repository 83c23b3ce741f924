#!/usr/bin/env bash
# q_auto / f_auto benchmark: bytes, SSIMULACRA 2 score, Butteraugli 3-norm and encode time side
# by side for fixed q_80 JPEG, q_auto:good JPEG, WebP and AVIF, and f_auto,q_auto, on the shared
# fixture photos (and crops of the large ones), generated flat graphics and screenshot-like
# images, and the images that break a sampled metric (Benchmarks/hard_images.py: night scenes,
# near-black frames, skies and gradients, flat screenshots, line art; tune and report halves);
# then the metric's check against the reference implementation. Results: Benchmarks/RESULTS.md.
# Usage: bash Benchmarks/quality.sh [--keep DIR] [--cold] [--no-hard] [--no-butteraugli]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
# libjxl-devtools: butteraugli_main, the independent check of every q_auto and f_auto output.
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3-pip fonts-dejavu-core libjxl-devtools
ensure_python_modules PIL=pillow numpy=numpy scipy=scipy ssimulacra2=ssimulacra2

fixtures="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
swift build -c release --product derive >/dev/null
derive="$(swift build -c release --show-bin-path)/derive"

echo "== q_auto / f_auto"
python3 Benchmarks/quality.py "$derive" "$fixtures" "$@"
echo
echo "== SSIMULACRA 2 against the reference implementation"
python3 Benchmarks/metric_check.py "$derive" "$fixtures" | tail -1
