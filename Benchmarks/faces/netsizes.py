#!/usr/bin/env python3
"""Derive's own CenterFace path at several canvases and thresholds, on both halves of the set.

Usage: netsizes.py DERIVE_BINARY FIXTURES_DIR CACHE_DIR [CANVAS ...]   (default 1024x1024 768x576 640x480 576x416 512x384)

Unlike candidates.py (OpenCV in Python, the image never reduced), this runs `derive faces` itself,
one core, with DERIVE_FACE_DETECTION_CANVAS set: the decode, libvips' resize to fit the canvas
with the aspect kept, the network on the canvas, boxes back in the file's pixels, exactly as a
job sees them. Faces are printed down to 0.15 once per canvas; each threshold then keeps those at
or above it. For each half (labels.json: split), as in candidates.py: recall and precision at
IoU >= 0.4 for faces of at least 5% of the shorter side, recall for faces of 12-40 px, and the
recall over every required face of any size (what a privacy effect must cover). Then the median
milliseconds per file (decode included).

The crop threshold and the privacy threshold are chosen on the tune half only: crops take the
threshold with the fewest false detections that still finds every 5% face; privacy effects the
lowest threshold whose precision stays at least 0.95 (the issue's bar), spending the whole
precision budget on covering more. (On the tune half every required face of any size is already
found at the crops' threshold, so "the most faces covered" cannot choose between them; the
report half, with more small faces, shows what the lower one buys.)
"""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dataset  # noqa: E402
from candidates import iou, score, IOU  # noqa: E402

THRESHOLDS = [0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6]


def every_face(image, found):
    """(hits, required faces) over the labelled faces of any size."""
    faces = image["faces"]
    free = set(range(len(faces)))
    for box in found:
        best = max(free, key=lambda i: iou(faces[i], box), default=None)
        if best is not None and iou(faces[best], box) >= IOU:
            free.discard(best)
    return len(faces) - len(free), len(faces)


def run(derive, files, canvas):
    env = dict(os.environ, DERIVE_FACE_DETECTION_CANVAS=canvas, DERIVE_FACE_DETECTOR="centerface")
    # The first file twice: the first detection builds the network and is not timed.
    out = subprocess.run(["taskset", "-c", "0", derive, "faces", "--threshold", "0.15", files[0]] + files,
                         env=env, capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in out.splitlines()][1:]
    return {p: ([[f["x"], f["y"], f["width"], f["height"], f["score"]] for f in r["faces"]], r["milliseconds"])
            for p, r in zip(files, rows)}


def main():
    derive, fixtures, cache = sys.argv[1:4]
    canvases = sys.argv[4:] or ["1024x1024", "768x576", "640x480", "576x416", "512x384"]
    images = dataset.load(cache, fixtures)
    for image in images:
        from PIL import Image
        with Image.open(image["path"]) as im:
            image["size"] = im.size
    files = [i["path"] for i in images]
    print("| canvas, threshold | tune: recall >=5%, precision, 12-40 px, every face | report: the same | ms per file (tune, report) |")
    print("|---|---|---|---|")
    chosen = {}
    for canvas in canvases:
        raw = run(derive, files, canvas)
        per = {}
        for threshold in THRESHOLDS:
            cells = []
            for half in ("tune", "report"):
                t = [0] * 7
                for image in images:
                    if image["entry"]["split"] != half:
                        continue
                    found = [b[:4] for b in raw[image["path"]][0] if b[4] >= threshold]
                    t = [a + b for a, b in zip(t, score(image, found) + every_face(image, found))]
                per[(threshold, half)] = t
                cells.append(f"{t[0] / max(1, t[1]):.3f} ({t[0]}/{t[1]}), {t[0] / max(1, t[0] + t[4]):.3f} ({t[4]} false), "
                             f"{t[2] / max(1, t[3]):.3f} ({t[2]}/{t[3]}), {t[5] / max(1, t[6]):.3f} ({t[5]}/{t[6]})")
            ms = [statistics.median(raw[i["path"]][1] for i in images if i["entry"]["split"] == h) for h in ("tune", "report")]
            print(f"| {canvas}, {threshold} | {cells[0]} | {cells[1]} | {ms[0]:.0f}, {ms[1]:.0f} |", flush=True)
        tune = {t: per[(t, "tune")] for t in THRESHOLDS}
        everything = max(v[0] for v in tune.values())
        crop = min((t for t, v in tune.items() if v[0] == everything), key=lambda t: (tune[t][4], -t))
        precise = [t for t, v in tune.items() if v[0] / max(1, v[0] + v[4]) >= 0.95 and t <= crop]
        privacy = min(precise) if precise else crop
        chosen[canvas] = (crop, privacy)
        print(f"| {canvas}: chosen on the tune half | crops {crop} (every 5% face found, fewest false), "
              f"privacy {privacy} (lowest with precision >= 0.95) | | |", flush=True)
    print(json.dumps({"chosen": chosen}))


if __name__ == "__main__":
    main()
