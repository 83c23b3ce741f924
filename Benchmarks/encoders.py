#!/usr/bin/env python3
"""The encoders' frontier (issue 40): for every lossy format Derive writes (AVIF through libaom
in libheif, WebP, JPEG, JPEG XL, HEIC), at each effort the encoder has, the bytes an encoding
needs to reach a fixed whole-image SSIMULACRA 2 score, against the processor time (user + sys
CPU, not wall time: the machine is shared) the encode takes.

Each image is made as Derive makes the benchmark's outputs (1200 px at most on its long side,
8-bit sRGB, libvips' thumbnail) and encoded in process through libvips (pyvips), with the
options Derive's `VipsEncoder.write` passes; every encoding is scored on the whole image with
`derive score`. For each (image, format, effort) the quality is bracketed around the target
(two to six encodes, seeded where the previous effort crossed it) and bytes and CPU time are
read off the straight line between the two qualities that straddle it (bytes on a log scale).

The images are the photographs of the quality benchmark's set of 35 (`Benchmarks/quality.py`:
twelve fixture photographs and eleven crops of the large ones). The set is split by position as
issue 29 split it: `--half tune` (even positions, the default: what the defaults are chosen on)
or `--half report` (odd positions, held out to confirm them).

Usage: python3 Benchmarks/encoders.py DERIVE_BINARY FIXTURES_DIR [--half tune|report] [--target 72]
                                      [--formats avif,webp,jpeg,jxl,heic] [--every N] [--json OUT] [--plot PNG]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import pyvips

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality  # noqa: E402  (the set of 35's photographs, made the same way)

# Derive's effort scale (0-9) as `VipsEncoder.write` maps it to each encoder's own, and which
# of the encoder's settings exist. Each row: format, the encoder's effort, the Derive efforts
# that map to it, a label.
WEBP = {e: [d for d in range(10) if min(6, round(d * 6 / 9 + 1e-9)) == e] for e in range(7)}


def settings(formats, slow):
    rows = []
    if "jpeg" in formats:
        rows.append(("jpeg", 0, list(range(10)), "libjpeg-turbo, optimised Huffman"))
        rows.append(("jpeg-progressive", 0, [], "libjpeg-turbo, progressive (progressive: true)"))
    if "webp" in formats:
        rows += [("webp", e, WEBP[e], f"libwebp method {e}") for e in range(7)]
    if "avif" in formats:
        rows += [("avif", e, [e], f"libaom speed {9 - e} (libheif, all-intra)") for e in range(10 if slow else 6)]
    if "jxl" in formats:
        # libvips' jxlsave reads efforts 3-9 only; Derive writes 0-2 as 3.
        rows += [("jxl", e, [e] + ([0, 1, 2] if e == 3 else []), f"libjxl effort {e}") for e in range(3, 10 if slow else 8)]
    if "heic" in formats:
        # x265 through libheif wrote the same bytes at efforts 0, 4 and 8: HEIC has one setting.
        rows.append(("heic", 4, [], "x265 (libheif), effort has no effect"))
    return rows


def encode(image, fmt, effort, q):
    """One encode as Derive's VipsEncoder.write makes it: (bytes, CPU seconds)."""
    start = time.process_time()
    if fmt == "jpeg":
        data = image.jpegsave_buffer(Q=q, optimize_coding=True, subsample_mode="auto", strip=True)
    elif fmt == "jpeg-progressive":
        data = image.jpegsave_buffer(Q=q, optimize_coding=True, interlace=True, subsample_mode="auto", strip=True)
    elif fmt == "webp":
        data = image.webpsave_buffer(Q=q, effort=effort, strip=True)
    elif fmt == "avif":
        data = image.heifsave_buffer(Q=q, compression="av1", effort=effort, subsample_mode="auto", bitdepth=8, strip=True)
    elif fmt == "heic":
        data = image.heifsave_buffer(Q=q, compression="hevc", effort=effort, subsample_mode="auto", bitdepth=8, strip=True)
    elif fmt == "jxl":
        data = image.jxlsave_buffer(Q=q, effort=min(9, max(3, effort)), strip=True)
    else:
        raise ValueError(fmt)
    return data, time.process_time() - start


SEED = {"jpeg": 72, "jpeg-progressive": 72, "webp": 80, "avif": 56, "jxl": 72, "heic": 56}
TOP = {"jpeg": 89, "jpeg-progressive": 89, "avif": 89, "heic": 89, "webp": 100, "jxl": 100}
SUFFIX = {"jpeg": ".jpg", "jpeg-progressive": ".jpg", "webp": ".webp", "avif": ".avif", "heic": ".heic", "jxl": ".jxl"}


class Scorer:
    def __init__(self, derive, work):
        self.derive, self.work, self.n = derive, work, 0

    def score(self, reference, data, fmt):
        self.n += 1
        path = os.path.join(self.work, f"candidate{SUFFIX[fmt]}")
        with open(path, "wb") as f:
            f.write(data)
        if self.derive == "reference":
            # PyPI's ssimulacra2 (the reference port `metric_check.py` compares Derive with):
            # the same scores to a few thousandths, much slower.
            import ssimulacra2
            decoded = os.path.join(self.work, "candidate.png")
            pyvips.Image.new_from_buffer(data, "").pngsave(decoded, compression=1)
            return float(ssimulacra2.compute_ssimulacra2(reference, decoded))
        env = dict(os.environ, DERIVE_ALLOW_LOADERS="jxl")
        out = subprocess.run([self.derive, "score", reference, path], capture_output=True, text=True, env=env)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip())
        return float(out.stdout.strip())


def crossing(image, reference, fmt, effort, target, seed, scorer):
    """Bytes and CPU seconds at the target score, interpolated between the two measured
    qualities that straddle it; None when the top of the range does not reach it."""
    trials = {}

    def measure(q):
        if q not in trials:
            data, cpu = encode(image, fmt, effort, q)
            trials[q] = (scorer.score(reference, data, fmt), len(data), cpu)
        return trials[q]

    q = max(1, min(TOP[fmt], seed))
    for _ in range(8):
        measure(q)
        passing = sorted(k for k, v in trials.items() if v[0] >= target)
        failing = sorted(k for k, v in trials.items() if v[0] < target)
        if passing and failing and passing[0] > failing[-1]:
            lo, hi = failing[-1], passing[0]
            if hi - lo <= 4:
                break
            q = (lo + hi) // 2
        elif passing:
            if passing[0] <= 1:
                return None
            q = max(1, passing[0] - 5)
        else:
            if failing[-1] >= TOP[fmt]:
                return None
            q = min(TOP[fmt], failing[-1] + 5)
    passing = sorted(k for k, v in trials.items() if v[0] >= target)
    failing = [k for k, v in trials.items() if v[0] < target and (not passing or k < passing[0])]
    if not passing or not failing:
        return None
    lo, hi = max(failing), passing[0]
    (s0, b0, c0), (s1, b1, c1) = trials[lo], trials[hi]
    f = 0 if s1 == s0 else (target - s0) / (s1 - s0)
    return {"quality": lo + f * (hi - lo), "bytes": math.exp(math.log(b0) + f * (math.log(b1) - math.log(b0))),
            "cpu": c0 + f * (c1 - c0), "encodes": len(trials)}


def prepare(path, work, index):
    """The image at 1200 px at most, 8-bit sRGB without alpha, and its lossless PNG."""
    image = pyvips.Image.thumbnail(path, 1200, height=1200, size="down")
    if image.interpretation not in ("srgb", "b-w"):
        image = image.colourspace("srgb")
    if image.hasalpha():
        image = image.flatten(background=[255, 255, 255])
    if image.bands == 1:
        image = image.colourspace("srgb")
    image = image.cast("uchar").copy_memory()
    reference = os.path.join(work, f"reference-{index}.png")
    image.pngsave(reference, compression=1)
    return image, reference


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("derive")
    parser.add_argument("fixtures")
    parser.add_argument("--half", choices=["tune", "report"], default="tune")
    parser.add_argument("--target", type=float, default=72.0, help="SSIMULACRA 2 on the whole image (q_auto:good's)")
    parser.add_argument("--formats", default="avif,webp,jpeg,jxl,heic")
    parser.add_argument("--every", type=int, default=1, help="every Nth image of the half")
    parser.add_argument("--slow", action="store_true", help="also AVIF efforts 6-9 and JPEG XL 8-9")
    parser.add_argument("--json", help="write every measurement here")
    parser.add_argument("--plot", help="write the frontier's plot (PNG) here")
    args = parser.parse_args()

    pyvips.cache_set_max(0)
    pyvips.concurrency_set(1)
    work = tempfile.mkdtemp()
    photos = quality.photos(args.fixtures, work)
    chosen = [p for i, p in enumerate(photos) if (i % 2 == 0) == (args.half == "tune")][::args.every]
    rows = settings(args.formats.split(","), args.slow)
    scorer = Scorer(args.derive, work)
    results = {}  # (fmt, effort) -> [per-image result or None]
    names = []
    for index, path in enumerate(chosen):
        image, reference = prepare(path, work, index)
        names.append(f"{os.path.basename(path)} {image.width}x{image.height}")
        seeds = {}
        for fmt, effort, _, _ in rows:
            family = fmt
            result = crossing(image, reference, fmt, effort, args.target, round(seeds.get(family, SEED[fmt])), scorer)
            if result:
                seeds[family] = result["quality"]
            results.setdefault((fmt, effort), []).append(result)
        line = "  ".join(f"{f}{e} {r['bytes'] / 1000:.1f}kB {r['cpu']:.2f}s" for (f, e), rs in results.items()
                         for r in rs[-1:] if r)
        print(f"{names[-1]}: {line}", file=sys.stderr, flush=True)

    # Every (format, effort) over the images where all of that format's efforts reached the
    # target, so that each format's rows add up the same images.
    table = []
    for fmt in dict.fromkeys(f for f, _, _, _ in rows):
        family = [(e, d, label) for f, e, d, label in rows if f == fmt]
        usable = [i for i in range(len(chosen)) if all(results[(fmt, e)][i] for e, _, _ in family)]
        if not usable:
            continue
        for effort, derive_efforts, label in family:
            rs = [results[(fmt, effort)][i] for i in usable]
            table.append({"format": fmt, "effort": effort, "derive": derive_efforts, "label": label, "images": len(usable),
                          "bytes": sum(r["bytes"] for r in rs), "cpu": sum(r["cpu"] for r in rs),
                          "quality": sum(r["quality"] for r in rs) / len(rs)})
    jpeg = next((t for t in table if t["format"] == "jpeg"), None)
    print(f"\n{args.half} half: {len(chosen)} photographs at most 1200 px ({', '.join(names)}); "
          f"SSIMULACRA 2 target {args.target:g} on the whole image; {scorer.n} encodes scored\n")
    print("| format | encoder setting | Derive effort | images | mean quality at target | bytes at target | vs JPEG "
          "| CPU s (encode) | CPU vs JPEG | vs next faster: time, bytes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for t in table:
        faster = [u for u in table if u["format"] == t["format"] and u["cpu"] < t["cpu"]]
        nearest = max(faster, key=lambda u: u["cpu"]) if faster else None
        step = (f"{t['cpu'] / nearest['cpu']:.1f}x, {100 * (t['bytes'] / nearest['bytes'] - 1):+.1f}%" if nearest else "fastest")
        derive_efforts = ",".join(map(str, t["derive"])) or "—"
        vs = f"{t['bytes'] / jpeg['bytes']:.2f}" if jpeg and jpeg["images"] == t["images"] else "—"
        cvs = f"{t['cpu'] / jpeg['cpu']:.1f}" if jpeg and jpeg["images"] == t["images"] else "—"
        print(f"| {t['format']} | {t['label']} | {derive_efforts} | {t['images']} | {t['quality']:.1f} | {t['bytes'] / 1000:.1f} kB "
              f"| {vs} | {t['cpu']:.2f} | {cvs} | {step} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"half": args.half, "target": args.target, "images": names, "table": table,
                       "results": {f"{k[0]}:{k[1]}": v for k, v in results.items()}}, f, indent=1)
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 5))
        for fmt in dict.fromkeys(t["format"] for t in table):
            pts = sorted((t["cpu"], t["bytes"] / 1000, t["effort"]) for t in table if t["format"] == fmt)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=fmt)
            for x, y, e in pts:
                ax.annotate(str(e), (x, y), textcoords="offset points", xytext=(3, 3), fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("encode CPU seconds (user+sys), all images")
        ax.set_ylabel(f"kB at SSIMULACRA 2 {args.target:g}, all images")
        ax.set_title(f"Encoders' frontier, {args.half} half ({len(chosen)} photographs, ≤1200 px); labels: encoder effort")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
