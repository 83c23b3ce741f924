#!/usr/bin/env python3
"""How well a q_auto sample predicts the whole image: for every photograph and screenshot that
`Benchmarks/quality.sh --keep DIR` rendered (its lossless `ref.png` outputs), encodes the whole
image and mosaics of tiles cut as PerceptualReference.mosaic cuts them (16-pixel grid, evenly
spread) as JPEG at several qualities, scores each against its own reference with `derive score`,
and prints the sample's score minus the whole image's (mean, deviation, largest) per sampling.
The search aims that much higher on the sample (PerceptualReference.margin).

JPEGs are written by Pillow's libjpeg-turbo with 4:2:0 chroma (the IJG quality tables libvips'
libjpeg-turbo uses too), so the figures describe JPEG's behaviour rather than one build.

Usage: python3 Benchmarks/sample_bias.py DERIVE_BINARY QUALITY_KEEP_DIR
"""
import os
import statistics
import subprocess
import sys
import tempfile

from PIL import Image

SAMPLINGS = [(128, 16), (128, 8), (96, 16), (64, 16)]  # (tile side, tiles)
QUALITIES = [45, 55, 65, 75, 85]


def origin(index, count, extent, tile):
    return min(extent - tile, (int((extent - tile) * (index + 0.5) / count) // 16) * 16)


def mosaic(image, tile, count):
    width, height = image.size
    tw, th = min(tile, width), min(tile, height)
    wanted = max(1, (count * tile * tile) // (tw * th))
    across = min(width // tw, 4)
    down = min(height // th, max(1, wanted // across))
    across = min(width // tw, max(across, wanted // down))
    out = Image.new("RGB", (across * tw, down * th))
    for row in range(down):
        for column in range(across):
            x, y = origin(column, across, width, tw), origin(row, down, height, th)
            out.paste(image.crop((x, y, x + tw, y + th)), (column * tw, row * th))
    return out


def scores(derive, reference, image, work, stem):
    paths = []
    for q in QUALITIES:
        path = os.path.join(work, f"{stem}-{q}.jpg")
        image.save(path, quality=q, subsampling=2)
        paths.append(path)
    out = subprocess.run([derive, "score", reference] + paths, capture_output=True, text=True, check=True).stdout
    return [float(line.split("\t")[0]) for line in out.splitlines() if line]


def main():
    derive, keep = sys.argv[1], sys.argv[2]
    outputs = os.path.join(keep, "out")
    work = tempfile.mkdtemp()
    differences = {s: [] for s in SAMPLINGS}
    for name in sorted(os.listdir(outputs)):
        if name.startswith("graphic"):
            continue
        reference = os.path.join(outputs, name, "ref.png")
        image = Image.open(reference).convert("RGB")
        whole = scores(derive, reference, image, work, f"{name}-whole")
        line = []
        for tile, count in SAMPLINGS:
            if image.size[0] * image.size[1] <= tile * tile * count:
                sample = whole  # searched whole: no sample
            else:
                cut = mosaic(image, tile, count)
                cut_path = os.path.join(work, f"{name}-{tile}-{count}.png")
                cut.save(cut_path)
                sample = scores(derive, cut_path, cut, work, f"{name}-{tile}-{count}")
            pairs = [(s - w) for s, w, q in zip(sample, whole, QUALITIES) if 55 <= q <= 75]
            differences[(tile, count)] += pairs
            line.append(" ".join(f"{d:+.1f}" for d in pairs))
        print(f"{name[:36]:36} " + " | ".join(line), flush=True)
    print("\nsample minus whole, JPEG quality 55-75:")
    for (tile, count), d in differences.items():
        print(f"  {count:2} tiles of {tile}x{tile}: mean {statistics.mean(d):+.2f}, deviation {statistics.stdev(d):.2f}, "
              f"largest {max(d):+.2f}")


if __name__ == "__main__":
    main()
