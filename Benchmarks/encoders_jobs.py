#!/usr/bin/env python3
"""Issue 40's table, old binary beside new: the processor time (user + sys CPU of the whole
`derive run` process, not wall time: the machine is shared) of one process deriving twelve
held-out camera photographs at `c_limit,w_1200,h_1200/<settings>`, for each of the issue's
settings, and of the quick start's job (Samples/ with Samples/web-outputs.json: three outputs
a photo). The binaries alternate, round after round; the median of the rounds is reported,
with the total bytes and f_auto,q_auto's bytes against q_80 JPEG's.

The twelve photographs are held out from the encoders' tuning (`Benchmarks/encoders.py` chose
the defaults on the tune half): the report half of the quality benchmark's photographs (the
fixture photos and crops at odd positions: canon-sx60hs, grace_hopper, kodak-pixpro,
landscape_1, jpeg-icc-adobergb, heic-1440x960, and five crops of the large photos) and
landscape_6 (another EXIF orientation), each written once as a camera-like JPEG (quality 92,
4:2:0) where it is not one already.

Usage: python3 Benchmarks/encoders_jobs.py OLD_DERIVE NEW_DERIVE FIXTURES_DIR [--rounds 3] [--settings a;b]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality  # noqa: E402

SETTINGS = ["f_jpg,q_80", "f_jpg,q_auto:good", "f_webp,q_80", "f_webp,q_auto:good", "f_avif,q_80", "f_avif,q_auto:good",
            "f_auto,q_auto"]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def held_out(fixtures, work):
    from PIL import Image
    photos = quality.photos(fixtures, work)
    chosen = [p for i, p in enumerate(photos) if i % 2 == 1]
    chosen.append(os.path.join(fixtures, "orientation/landscape_6.jpg"))
    out = []
    for index, path in enumerate(chosen):
        if path.lower().endswith((".jpg", ".jpeg")):
            out.append(path)
            continue
        target = os.path.join(work, f"held-out-{index}.jpg")
        if path.endswith(".heic"):
            subprocess.run([sys.executable, "-c", "import pyvips,sys; pyvips.Image.new_from_file(sys.argv[1])"
                            ".jpegsave(sys.argv[2], Q=92)", path, target], check=True)
        else:
            Image.open(path).convert("RGB").save(target, quality=92)
        out.append(target)
    return out


def run(derive, sources, chain, out):
    """CPU seconds (user + sys) of one `derive run` process, and the bytes it wrote."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([derive, "run", *sources, "--chain", chain, "--out", out], capture_output=True, text=True,
                          env=dict(os.environ, DERIVE_VIPS_CONCURRENCY="2"))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{derive} {chain}: {proc.stderr.strip()[:400]}")
    reports = json.loads(proc.stdout)
    total = sum(o["bytes"] for r in reports for o in r["outputs"])
    formats = [o["format"] for r in reports for o in r["outputs"]]
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, total, formats


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("fixtures")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settings", help="semicolon-separated, default the issue's seven")
    parser.add_argument("--no-quickstart", action="store_true")
    args = parser.parse_args()
    work = tempfile.mkdtemp()
    sources = held_out(args.fixtures, work)
    settings = args.settings.split(";") if args.settings else SETTINGS
    jobs = [(s, sources, f"c_limit,w_1200,h_1200/{s}") for s in settings]
    if not args.no_quickstart:
        samples = sorted(os.path.join(ROOT, "Samples", f) for f in os.listdir(os.path.join(ROOT, "Samples"))
                         if f.endswith((".jpg", ".png")))
        jobs.append(("quick start's job (3 outputs a photo)", samples, os.path.join(ROOT, "Samples", "web-outputs.json")))
    cpu = {}
    sizes = {}
    kinds = {}
    for r in range(args.rounds):
        for name, srcs, chain in jobs:
            for label, binary in (("old", args.old), ("new", args.new)) if r % 2 == 0 else (("new", args.new), ("old", args.old)):
                seconds, total, formats = run(binary, srcs, chain, os.path.join(work, f"out-{label}"))
                cpu.setdefault((name, label), []).append(seconds)
                sizes[(name, label)] = total
                kinds[(name, label)] = formats
        print(f"round {r + 1} done", file=sys.stderr, flush=True)
    med = {k: statistics.median(v) for k, v in cpu.items()}
    base = {label: med[(SETTINGS[0], label)] for label in ("old", "new")} if SETTINGS[0] in settings else None
    print(f"\n{len(sources)} held-out photographs ({', '.join(os.path.basename(s) for s in sources)}); "
          f"median of {args.rounds} rounds, CPU seconds (user + sys) of one `derive run` process\n")
    print("| settings | old CPU s | old × JPEG q_80 | new CPU s | new × JPEG q_80 | new / old | old bytes | new bytes |")
    print("|---|---|---|---|---|---|---|---|")
    for name, _, _ in jobs:
        o, n = med[(name, "old")], med[(name, "new")]
        ox = f"{o / base['old']:.1f}" if base and not name.startswith("quick") else "—"
        nx = f"{n / base['new']:.1f}" if base and not name.startswith("quick") else "—"
        print(f"| `{name}` | {o:.2f} | {ox} | {n:.2f} | {nx} | {n / o:.2f} | {sizes[(name, 'old')]:,} | {sizes[(name, 'new')]:,} |")
    if "f_auto,q_auto" in settings and "f_jpg,q_80" in settings:
        for label in ("old", "new"):
            ratio = sizes[("f_auto,q_auto", label)] / sizes[("f_jpg,q_80", label)]
            chosen = kinds[("f_auto,q_auto", label)]
            print(f"\n{label}: f_auto,q_auto bytes {ratio:.3f}x of q_80 JPEG's; formats chosen: "
                  + ", ".join(f"{f} {chosen.count(f)}" for f in sorted(set(chosen))))


if __name__ == "__main__":
    main()
