#!/usr/bin/env python3
"""q_auto:good's time against one fixed-quality encode of the same output, for two or more
derive binaries run back to back (A B A B ...), on the same images as Benchmarks/quality.py
(the set of 35 and the hard images). JPEG by default (q_80); --formats jpeg,webp,avif adds
WebP (q_80) and AVIF (q_50), the fixed encodes quality.py compares with.

Two measures, both of one output against one output of the same image, the same chain and the
same process, so decoding the source is on neither side:

- wall: each output's `encode` stage from `derive run`'s report (the search, or the fixed
  encode; both include computing the resized pixels, which the second output of a chain mostly
  finds in libvips' cache), summed over the images. On a shared machine this swings with the
  load, and the search's two threads make it lower than CPU time when a core is free.
- CPU: user + system time of whole `derive run` processes (getrusage of the children, so every
  thread): [fixed], [fixed, fixed again under another name] and [fixed, q_auto]. One more fixed
  output costs the second minus the first, the q_auto output the third minus the first: each
  with the same per-output work around the encode (pixels, preview, hash, file). The lowest of
  the rounds is reported, the least disturbed by other processes.

Usage: python3 Benchmarks/quality_timing.py FIXTURES_DIR ROUNDS DERIVE_BINARY [DERIVE_BINARY...]
           [--formats jpeg,webp,avif]
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

import hard_images
import quality

FIXED = {"jpeg": 80, "webp": 80, "avif": 50}


def job(*outputs):
    return {"outputs": [{"name": name, "chain": quality.CHAIN, "format": fmt, "quality": q} for name, fmt, q in outputs]}


def run(binary, paths, spec, out):
    """CPU seconds of one `derive run` and its outputs' encode stages (ms) per image."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([binary, "run", *paths, "--chain", json.dumps(spec), "--out", out],
                          capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return cpu, [{o["name"]: o["timings"]["encode"] for o in report["outputs"]} for report in json.loads(done.stdout)]


def main():
    args = sys.argv[1:]
    formats = ["jpeg"]
    if "--formats" in args:
        at = args.index("--formats")
        formats = args[at + 1].split(",")
        del args[at:at + 2]
    fixtures, rounds, binaries = args[0], int(args[1]), args[2:]
    work = tempfile.mkdtemp()
    set35 = quality.photos(fixtures, work) + quality.graphics(work, 6) + quality.screenshots(work, 6)
    hard = [path for path, _ in hard_images.make(fixtures, os.path.join(work, "hard"))]
    paths = set35 + hard
    out = os.path.join(work, "out")
    for fmt in formats:
        q = FIXED[fmt]
        jobs = {"one": job(("fixed", fmt, q)), "two": job(("fixed", fmt, q), ("again", fmt, q)),
                "auto": job(("fixed", fmt, q), ("auto", fmt, "auto:good"))}
        cpu = {binary: {name: [] for name in jobs} for binary in binaries}
        for r in range(rounds):
            for binary in binaries:
                for name, spec in jobs.items():
                    seconds, ms = run(binary, paths, spec, out)
                    cpu[binary][name].append(seconds)
                    if name == "auto":
                        wall = ms
                c = {name: values[-1] for name, values in cpu[binary].items()}

                def ratio(part):
                    return sum(m["auto"] for m in part) / sum(m["fixed"] for m in part)
                print(f"{fmt} round {r + 1} {binary}: wall {ratio(wall[:len(set35)]):.2f}x one q_{q} encode on the set of 35, "
                      f"{ratio(wall):.2f}x on all {len(wall)} (q_{q} {sum(m['fixed'] for m in wall):.0f} ms in all); "
                      f"CPU: q_auto {1000 * (c['auto'] - c['one']):.0f} ms, one more q_{q} {1000 * (c['two'] - c['one']):.0f} ms "
                      f"(load average {os.getloadavg()[0]:.1f})", flush=True)
        for binary in binaries:
            low = {name: min(values) for name, values in cpu[binary].items()}
            searched, fixed = low["auto"] - low["one"], low["two"] - low["one"]
            print(f"{fmt} {binary}: lowest of {rounds} rounds, CPU of the {len(paths)} q_auto:good outputs {1000 * searched:.0f} ms "
                  f"({1000 * searched / len(paths):.1f} a picture), of {len(paths)} more q_{q} outputs {1000 * fixed:.0f} ms "
                  f"({1000 * fixed / len(paths):.1f}): {searched / fixed:.2f}x", flush=True)


if __name__ == "__main__":
    main()
