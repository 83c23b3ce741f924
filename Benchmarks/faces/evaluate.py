#!/usr/bin/env python3
"""Recall, precision and time per image of face detectors on Benchmarks/faces/labels.json.

Usage: evaluate.py DERIVE_BINARY FIXTURES_DIR [--sizes 1300,1100,900]

Detectors, each over the same files, one core, detector loaded before timing:
  * Derive (`derive faces`: dlib's HOG frontal detector through CFaceShim, decode included),
    once per DERIVE_FACE_DETECTION_SIZE given with --sizes;
  * OpenCV's Haar cascade haarcascade_frontalface_alt.xml with thumbor's settings (grey,
    equalised histogram, scale 1.2, 3 neighbours, smallest face max(20, shorter side / 15));
  * the same cascade with a smallest face of 5% of the shorter side (what our targets ask).

A labelled face counts when its box is at least 5% of the image's shorter side. A detection
matches a face at intersection over union >= 0.4 (greedy, best score first); a detection that
matches only a smaller labelled face is neither a hit nor a false detection.

Then the limits: two portraits turned in the image plane, and every photo of a few people
shrunk onto a large canvas, their boxes moved along, say which faces each detector still finds.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import cv2
from PIL import Image, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
IOU = 0.4
SMALLEST = 0.05


def resolve(path, fixtures):
    if path.startswith("fixtures:"):
        return os.path.join(fixtures, path[len("fixtures:"):])
    if path.startswith("repo:"):
        return os.path.join(REPO, path[len("repo:"):])
    return os.path.join(HERE, path)


def iou(a, b):
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    w = min(ax + aw, bx + bw) - max(ax, bx)
    h = min(ay + ah, by + bh) - max(ay, by)
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / (aw * ah + bw * bh - inter)


def score_image(labels, found, shorter):
    """(hits, required faces, false detections) for one image."""
    required = [b for b in labels if max(b[2], b[3]) >= SMALLEST * shorter]
    small = [b for b in labels if max(b[2], b[3]) < SMALLEST * shorter]
    free = list(required)
    hits = false = 0
    for box in found:  # best score first
        best = max(free, key=lambda b: iou(b, box), default=None)
        if best is not None and iou(best, box) >= IOU:
            free.remove(best)
            hits += 1
        elif any(iou(b, box) >= IOU for b in small):
            continue
        else:
            false += 1
    return hits, len(required), false


def run_derive(derive, files, size):
    env = dict(os.environ, DERIVE_FACE_DETECTION_SIZE=str(size))
    # The first file pays for building the detector (once per process and thread in a
    # worker); it is measured again at the end and its first time dropped.
    out = subprocess.run(["taskset", "-c", "0", derive, "faces", files[0]] + files,
                         env=env, capture_output=True, text=True, check=False).stdout
    rows = [json.loads(line) for line in out.splitlines()][1:]
    results = {}
    for path, row in zip(files, rows):
        if "error" in row:
            raise SystemExit(f"{path}: {row['error']}")
        boxes = [[f["x"], f["y"], f["width"], f["height"]] for f in row["faces"]]
        results[path] = (boxes, row["milliseconds"])
    return results


def run_haar(files, thumbor):
    cascade = cv2.CascadeClassifier(os.path.join(cv2.data.haarcascades, "haarcascade_frontalface_alt.xml"))
    results = {}
    for path in files:
        started = time.perf_counter()
        image = cv2.imread(path, cv2.IMREAD_GRAYSCALE)  # applies EXIF orientation, as Derive does
        shorter = min(image.shape[:2])
        if thumbor:
            image = cv2.equalizeHist(image)
            smallest = max(20, shorter // 15)
            faces = cascade.detectMultiScale(image, scaleFactor=1.2, minNeighbors=3, minSize=(smallest, smallest))
        else:
            smallest = max(20, int(shorter * SMALLEST * 0.8))
            faces = cascade.detectMultiScale(image, scaleFactor=1.1, minNeighbors=3, minSize=(smallest, smallest))
        milliseconds = (time.perf_counter() - started) * 1000
        results[path] = ([list(map(int, f)) for f in faces], milliseconds)
    return results


def summarise(name, labelled, results):
    hits = required = false = 0
    for path, entry in labelled.items():
        found, _ = results[path]
        h, r, f = score_image(entry["faces"], found, min(entry["size"]))
        hits, required, false = hits + h, required + r, false + f
    times = [results[p][1] for p in labelled]
    recall = hits / required if required else 0
    precision = hits / (hits + false) if hits + false else 0
    return (f"| {name} | {recall:.3f} ({hits}/{required}) | {precision:.3f} ({false} false) | "
            f"{statistics.median(times):.0f} | {statistics.mean(times):.0f} | {max(times):.0f} |")


def limits(derive, fixtures, size, workdir):
    """Turned and shrunk copies of the portraits; which faces each detector still finds."""
    labels = json.load(open(os.path.join(HERE, "labels.json")))["images"]
    cases = []
    turned_bases = [e for e in labels if e["file"] in ("fixtures:photos/grace_hopper_noexif.jpg", "images/fr-two-people.jpg")]
    for base in turned_bases:
        image = ImageOps.exif_transpose(Image.open(resolve(base["file"], fixtures))).convert("RGB")
        name = os.path.basename(base["file"]).split(".")[0]
        for angle in (15, 30, 45):
            turned = image.rotate(-angle, resample=Image.BICUBIC, expand=True, fillcolor=(128, 128, 128))
            faces = [turn_box(b, angle, image.size, turned.size) for b in base["faces"]]
            path = os.path.join(workdir, f"{name}-turned-{angle}.jpg")
            turned.save(path, quality=92)
            cases.append((f"turned {angle}° (2 photos)", path, faces))
    # Every photo of a few people, its largest face shrunk to a share of a 2400x1600 canvas's
    # shorter side; faces that end up smaller than nine tenths of that share are left out.
    portraits = [e for e in labels if 0 < len(e["faces"]) <= 6 and not e["file"].startswith("images/dlib-20")]
    for share in (0.03, 0.045, 0.05, 0.08):
        for base in portraits:
            image = ImageOps.exif_transpose(Image.open(resolve(base["file"], fixtures))).convert("RGB")
            largest = max(base["faces"], key=lambda b: b[2])
            scale = share * 1600 / largest[2]
            small = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.LANCZOS)
            canvas = Image.new("RGB", (2400, 1600), (128, 128, 128))
            canvas.paste(small, (100, 100))
            faces = [[round(100 + b[0] * scale), round(100 + b[1] * scale), round(b[2] * scale), round(b[3] * scale)]
                     for b in base["faces"] if b[2] * scale >= 0.9 * share * 1600]
            path = os.path.join(workdir, f"small-{share}-{os.path.basename(base['file'])}")
            canvas.save(path, quality=92)
            cases.append((f"faces {share * 100:g}% of the shorter side ({len(portraits)} photos)", path, faces))
    files = [c[1] for c in cases]
    found = {f"Derive at {size}": run_derive(derive, files, size), "Haar (thumbor)": run_haar(files, True)}
    rows = {}
    for label, path, faces in cases:
        row = rows.setdefault(label, {k: [0, 0] for k in found})
        for detector, results in found.items():
            hits = sum(1 for b in faces if any(iou(b, f) >= IOU for f in results[path][0]))
            row[detector][0] += hits
            row[detector][1] += len(faces)
    print("| case | " + " | ".join(found) + " |")
    print("|---|" + "---|" * len(found))
    for label, row in rows.items():
        print(f"| {label} | " + " | ".join(f"{h}/{n}" for h, n in row.values()) + " |")


def turn_box(box, angle, before, after):
    """The axis-aligned box of the same size around the turned centre (PIL turns about the centre)."""
    import math
    cx, cy = box[0] + box[2] / 2 - before[0] / 2, box[1] + box[3] / 2 - before[1] / 2
    a = math.radians(angle)
    x = cx * math.cos(a) - cy * math.sin(a) + after[0] / 2
    y = cx * math.sin(a) + cy * math.cos(a) + after[1] / 2
    return [round(x - box[2] / 2), round(y - box[3] / 2), box[2], box[3]]


def main():
    derive, fixtures = sys.argv[1], sys.argv[2]
    os.sched_setaffinity(0, {0})  # one core, for Derive (inherited) and OpenCV alike
    sizes = [1300]
    if "--sizes" in sys.argv:
        sizes = [int(s) for s in sys.argv[sys.argv.index("--sizes") + 1].split(",")]
    labels = json.load(open(os.path.join(HERE, "labels.json")))["images"]
    labelled = {}
    for entry in labels:
        path = resolve(entry["file"], fixtures)
        size = ImageOps.exif_transpose(Image.open(path)).size
        labelled[path] = {"faces": entry["faces"], "size": size}
    files = list(labelled)
    required = sum(1 for e in labelled.values() for b in e["faces"] if max(b[2], b[3]) >= SMALLEST * min(e["size"]))
    print(f"{len(files)} images, {required} faces of at least 5% of the shorter side "
          f"({sum(1 for e in labelled.values() if not e['faces'])} images without faces); IoU >= {IOU}")
    print()
    print("| detector | recall | precision | median ms | mean ms | max ms |")
    print("|---|---|---|---|---|---|")
    for size in sizes:
        print(summarise(f"Derive, dlib HOG, detection size {size}", labelled, run_derive(derive, files, size)))
    cv2.setNumThreads(1)
    print(summarise("OpenCV Haar, thumbor's settings", labelled, run_haar(files, True)))
    print(summarise("OpenCV Haar, smallest face 4% of the shorter side", labelled, run_haar(files, False)))
    print()
    print(f"Limits (faces found at IoU >= {IOU}):")
    print()
    with tempfile.TemporaryDirectory() as workdir:
        limits(derive, fixtures, sizes[0], workdir)


if __name__ == "__main__":
    main()
