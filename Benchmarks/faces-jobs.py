#!/usr/bin/env python3
"""Issue 43's table, old binary beside new: for each chain, one `derive run` process deriving
eight camera-sized JPEGs of 6-16 MP, its processor time (user + sys of the whole process, not
wall time: the machine is shared) and its peak resident memory, and each face chain's ratio to
the same chain without faces (`c_thumb,g_north` for `c_thumb,g_face` and `c_crop,g_face`,
`c_fill,g_north` for `g_auto` and `g_faces`, `c_limit,w_1200` for `e_pixelate_faces/c_limit,w_1200`).
The binaries alternate, round after round; the median of the rounds is printed.

It also checks that the new binary takes the same crops as the old one: every content-aware
crop in the reports (`outputs[].crops[].rect`), source by source, and prints how many are the
same to the pixel and the largest difference of an edge, in pixels of the source.

The photographs: the shared fixtures' three camera photographs of 6-16 MP as they are
(`apple-iphone-6_square_orient6.jpg`, 6 MP, EXIF orientation 6; `jolla-phone.jpg`, 8 MP;
`kodak-pixpro-az521.jpg`, 16 MP), which hold no face, and five photographs with faces from the
face set (`Tests/Fixtures/group-of-six.jpg` and four of `Benchmarks/faces/images`), enlarged
with lanczos to 8-13 MP and written as a camera writes them (JPEG quality 92, 4:2:0): the
fixtures hold no camera photograph of that size with a face in it. Enlarged photographs are
softer than a camera's, so they encode a little cheaper; both binaries read the same files.

Usage: python3 Benchmarks/faces-jobs.py OLD_DERIVE NEW_DERIVE [--fixtures DIR] [--rounds 3]
       [--chains 'a;b'] [--face-library PATH] [--old-env NAME=VALUE]
The face library (libDeriveFaceNet.so, the OpenCV half of the detector) is the same for both
binaries: DERIVE_FACE_LIBRARY, by default the one beside NEW_DERIVE.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (chain, the plain chain it is compared with); the plain chains are rows of their own.
CHAINS = [
    ("c_thumb,g_north,w_200,h_200", None),
    ("c_thumb,g_face,w_200,h_200", "c_thumb,g_north,w_200,h_200"),
    ("c_crop,g_face,w_300,h_300", "c_thumb,g_north,w_200,h_200"),
    ("c_fill,g_north,w_600,h_315", None),
    ("c_fill,g_auto,w_600,h_315", "c_fill,g_north,w_600,h_315"),
    ("c_fill,g_faces,w_600,h_315", "c_fill,g_north,w_600,h_315"),
    ("c_limit,w_1200", None),
    ("e_pixelate_faces/c_limit,w_1200", "c_limit,w_1200"),
]

# Face photographs enlarged to camera sizes: (path under the repository, width, height).
ENLARGED = [
    ("Tests/Fixtures/group-of-six.jpg", 4000, 2769),
    ("Benchmarks/faces/images/gfpgan-00.jpg", 2592, 3837),
    ("Benchmarks/faces/images/facenet-pytorch-multiface.jpg", 4200, 2205),
    ("Benchmarks/faces/images/ultralight-3.jpg", 4000, 3000),
    ("Benchmarks/faces/images/ultralight-9.jpg", 3264, 2448),
]
CAMERA = ["photos/apple-iphone-6_square_orient6.jpg", "photos/jolla-phone.jpg", "photos/kodak-pixpro-az521.jpg"]


def photographs(fixtures, work):
    from PIL import Image
    paths = [os.path.join(fixtures, name) for name in CAMERA]
    for name, width, height in ENLARGED:
        target = os.path.join(work, os.path.basename(name).rsplit(".", 1)[0] + f"-{width}x{height}.jpg")
        Image.open(os.path.join(ROOT, name)).convert("RGB").resize((width, height), Image.LANCZOS) \
            .save(target, quality=92, subsampling=2)
        paths.append(target)
    return paths


def run(derive, sources, chain, out, env):
    """Processor seconds (user + sys) and peak RSS (MiB) of one `derive run` process, and its reports."""
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen([derive, "run", *sources, "--chain", chain, "--out", out, "--json"],
                                stdout=stdout, stderr=stderr, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{derive} {chain}: exit {proc.returncode}: {stderr.read().decode()[:600]}")
        reports = json.loads(stdout.read())
    failed = [r for r in reports if r.get("error")]
    if failed:
        raise RuntimeError(f"{derive} {chain}: {failed[0]['error']}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, reports


def crops(reports):
    """Every content-aware crop a run's reports record, per source: (source, output, rect)."""
    found = []
    for report in reports:
        name = os.path.basename((report.get("source") or {}).get("location", "?"))
        for index, output in enumerate(report.get("outputs", [])):
            for crop in output.get("crops", []):
                rect = crop["rect"]
                found.append((name, index, (rect["x"], rect["y"], rect["width"], rect["height"]),
                              (crop["of"]["width"], crop["of"]["height"])))
    return found


def scores(binaries, sources, chain, work, envs):
    """SSIMULACRA 2 of each new output against the old one, both written as PNG (so that the
    score is of the pixels, not of two JPEG encodes), by the new binary's `derive score`."""
    dirs = {}
    for name, derive in binaries.items():
        dirs[name] = tempfile.mkdtemp(dir=work)
        run(derive, sources, chain + "/f_png", dirs[name], envs[name])
    found = []
    for root, _, files in os.walk(dirs["old"]):
        for file in sorted(files):
            old = os.path.join(root, file)
            new = os.path.join(dirs["new"], os.path.relpath(old, dirs["old"]))
            if not os.path.exists(new):
                found.append((file, None))
                continue
            proc = subprocess.run([binaries["new"], "score", old, new], capture_output=True, text=True, env=envs["new"])
            found.append((file, float(proc.stdout.strip()) if proc.returncode == 0 else None))
    for d in dirs.values():
        subprocess.run(["rm", "-rf", d], check=True)
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--fixtures", default=os.environ.get("DERIVE_FIXTURES", os.path.join(os.path.dirname(ROOT), "shared", "fixtures")))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--chains", help="semicolon-separated, default the issue's eight")
    parser.add_argument("--old-env", action="append", default=[], metavar="NAME=VALUE",
                        help="set for the old binary's runs only: with the same binary twice and "
                             "DERIVE_FACE_DECODE_TWICE=0, the one decode of before beside the two")
    parser.add_argument("--face-library", default=os.path.join(os.path.dirname(os.path.abspath(sys.argv[2])), "libDeriveFaceNet.so"))
    args = parser.parse_args()
    chains = CHAINS
    if args.chains:
        wanted = args.chains.split(";")
        chains = [c for c in CHAINS if c[0] in wanted] + [(c, None) for c in wanted if c not in dict(CHAINS)]
    work = tempfile.mkdtemp()
    sources = photographs(args.fixtures, work)
    env = dict(os.environ, DERIVE_FACE_LIBRARY=os.path.abspath(args.face_library), DERIVE_FACE_DETECTOR="centerface")
    binaries = {"old": args.old, "new": args.new}
    envs = {"old": dict(env, **dict(item.split("=", 1) for item in args.old_env)), "new": env}
    cpu = {(b, c): [] for b in binaries for c, _ in chains}
    rss = {(b, c): [] for b in binaries for c, _ in chains}
    cropped = {}
    for round_ in range(args.rounds):
        for chain, _ in chains:
            order = list(binaries.items()) if round_ % 2 == 0 else list(reversed(binaries.items()))
            for name, derive in order:
                out = tempfile.mkdtemp(dir=work)
                seconds, mib, reports = run(derive, sources, chain, out, envs[name])
                subprocess.run(["rm", "-rf", out], check=True)
                cpu[(name, chain)].append(seconds)
                rss[(name, chain)].append(mib)
                cropped[(name, chain)] = crops(reports)
        print(f"round {round_ + 1} of {args.rounds} done", file=sys.stderr)

    print(f"{len(sources)} photographs: " + ", ".join(os.path.basename(s) for s in sources))
    print(f"one `derive run` process per chain and binary, median of {args.rounds} rounds; "
          "CPU = user + sys seconds for all photographs; x plain = CPU / the plain chain's CPU (same binary); "
          "peak = peak RSS MiB, and its ratio to the plain chain's")
    header = f"{'chain':36s} | {'old CPU':>7s} {'x plain':>7s} {'peak':>5s} {'x':>5s} | {'new CPU':>7s} {'x plain':>7s} {'peak':>5s} {'x':>5s} | new/old CPU"
    print(header)
    print("-" * len(header))
    med = lambda values: statistics.median(values)
    for chain, plain in chains:
        cells = []
        for name in binaries:
            c, m = med(cpu[(name, chain)]), med(rss[(name, chain)])
            if plain and (name, plain) in cpu:
                cells.append(f"{c:7.2f} {c / med(cpu[(name, plain)]):6.2f}x {m:5.0f} {m / med(rss[(name, plain)]):4.2f}x")
            else:
                cells.append(f"{c:7.2f} {'1.00x' if plain is None else '':>7s} {m:5.0f} {'':>5s}")
        ratio = med(cpu[("new", chain)]) / med(cpu[("old", chain)])
        print(f"{chain:36s} | {cells[0]} | {cells[1]} | {ratio:.2f}")
    print()
    print("SSIMULACRA 2 of each new output against the old one (both PNG; 100 = the same pixels, 90 visually lossless):")
    for chain, _ in chains:
        found = scores(binaries, sources, chain, work, envs)
        values = [v for _, v in found if v is not None]
        missing = [f for f, v in found if v is None]
        line = f"  {chain:36s} lowest {min(values):6.2f}, median {statistics.median(values):6.2f} of {len(values)}" if values else f"  {chain:36s} none"
        print(line + (f"; not comparable (size or name differs): {', '.join(missing)}" if missing else ""))
    print()
    print("crops, old beside new (rect in the pixels of the image the step received):")
    for chain, _ in chains:
        old, new = cropped[("old", chain)], cropped[("new", chain)]
        if not old and not new:
            continue
        same = sum(1 for a, b in zip(old, new) if a == b)
        worst = 0
        for a, b in zip(old, new):
            if a[0] == b[0] and a[1] == b[1]:
                worst = max(worst, max(abs(p - q) for p, q in zip(a[2], b[2])))
        print(f"  {chain:36s} {same} of {len(old)} the same (new: {len(new)}), largest edge difference {worst} px")
        for a, b in zip(old, new):
            if a != b:
                print(f"    {a[0]} output {a[1]}: old {a[2]} of {a[3]}, new {b[2]} of {b[3]}")


if __name__ == "__main__":
    main()
