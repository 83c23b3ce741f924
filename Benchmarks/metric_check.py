#!/usr/bin/env python3
"""Checks Derive's SSIMULACRA 2 (`derive score`) against the reference implementation, the
PyPI `ssimulacra2` package (a port of libjxl's tools/ssimulacra2.cc), on image pairs with a
range of distortions: JPEG and WebP at many qualities, Gaussian blur, noise.

Usage: python3 Benchmarks/metric_check.py DERIVE_BINARY FIXTURES_DIR [--expected OUT.json]

Prints one line per pair and a summary (Pearson and Spearman correlation, largest and mean
absolute difference). With --expected, also writes the reference scores of a few small pairs
for the unit test (Tests/DeriveLanguageTests/Resources is not used: the test makes the same pairs
itself from the PNGs written beside the JSON).
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, ImageFilter
from ssimulacra2 import compute_ssimulacra2


def sources(fixtures):
    """Reference images: photos at a moderate size, plus a generated flat graphic."""
    names = ["photos/coffee_noexif.png", "photos/grace_hopper_noexif.jpg", "photos/nikon-coolpix-p6000_gps.jpg",
             "orientation/landscape_1.jpg", "photos/jolla-phone.jpg"]
    images = []
    for name in names:
        image = Image.open(os.path.join(fixtures, name)).convert("RGB")
        image.thumbnail((480, 480))
        images.append((os.path.basename(name).split(".")[0], image))
    graphic = Image.new("RGB", (400, 300), (250, 250, 250))
    pixels = graphic.load()
    for y in range(300):
        for x in range(400):
            if (x // 50 + y // 50) % 2 == 0 and x < 300:
                pixels[x, y] = (30, 90, 200)
            if (x - 320) ** 2 + (y - 150) ** 2 < 40 ** 2:
                pixels[x, y] = (220, 40, 40)
    images.append(("graphic", graphic))
    return images


def distortions(image, seed):
    """Named distorted copies of `image`."""
    out = []
    for q in (10, 25, 40, 55, 70, 85, 95):
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=q)
        out.append((f"jpeg{q}", Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")))
    for q in (10, 40, 70, 90):
        buffer = io.BytesIO()
        image.save(buffer, "WEBP", quality=q)
        out.append((f"webp{q}", Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")))
    for radius in (0.6, 1.5):
        out.append((f"blur{radius}", image.filter(ImageFilter.GaussianBlur(radius))))
    rng = np.random.default_rng(seed)
    array = np.asarray(image, dtype=np.float64)
    for sigma in (3, 12):
        noisy = np.clip(array + rng.normal(0, sigma, array.shape), 0, 255).astype(np.uint8)
        out.append((f"noise{sigma}", Image.fromarray(noisy)))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("derive")
    parser.add_argument("fixtures")
    parser.add_argument("--expected", help="write reference scores for the unit test here")
    args = parser.parse_args()

    ours, theirs, rows = [], [], []
    with tempfile.TemporaryDirectory() as work:
        for index, (name, image) in enumerate(sources(args.fixtures)):
            reference = os.path.join(work, f"{name}.png")
            image.save(reference)
            paths = []
            for label, distorted in distortions(image, index):
                path = os.path.join(work, f"{name}-{label}.png")
                distorted.save(path)
                paths.append((label, path))
            output = subprocess.run([args.derive, "score", reference] + [p for _, p in paths],
                                    check=True, capture_output=True, text=True).stdout.split("\n")
            for (label, path), line in zip(paths, output):
                derive_score = float(line.split("\t")[0])
                reference_score = compute_ssimulacra2(reference, path)
                ours.append(derive_score)
                theirs.append(reference_score)
                rows.append((f"{name}/{label}", derive_score, reference_score))
                print(f"{name:28} {label:9} derive {derive_score:8.3f}  reference {reference_score:8.3f}  "
                      f"diff {derive_score - reference_score:+.3f}", flush=True)

    a, b = np.array(ours), np.array(theirs)
    diff = np.abs(a - b)
    pearson = np.corrcoef(a, b)[0, 1]
    ranks = lambda v: np.argsort(np.argsort(v))
    spearman = np.corrcoef(ranks(a), ranks(b))[0, 1]
    worst = rows[int(np.argmax(diff))]
    print(f"\npairs {len(rows)}  pearson {pearson:.6f}  spearman {spearman:.6f}  "
          f"max |diff| {diff.max():.4f} ({worst[0]})  mean |diff| {diff.mean():.4f}")
    if args.expected:
        with open(args.expected, "w") as f:
            json.dump({name: score for name, _, score in rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
