#!/usr/bin/env python3
"""q_auto:good JPEG's time against one fixed q_80 encode, for two or more derive binaries run
back to back (A B A B ...), on the same images as Benchmarks/quality.py (the set of 35 and the
hard images). Only the two JPEG outputs are made, so a round takes a minute or two; on a busy
machine, alternate binaries and compare the rounds side by side, not with another day's run.

Usage: python3 Benchmarks/quality_timing.py FIXTURES_DIR ROUNDS DERIVE_BINARY [DERIVE_BINARY...]
"""
import json
import os
import subprocess
import sys
import tempfile

import hard_images
import quality

JOB = {"outputs": [{"name": "jpeg80", "chain": quality.CHAIN, "format": "jpeg", "quality": 80},
                   {"name": "jpegauto", "chain": quality.CHAIN, "format": "jpeg", "quality": "auto:good"}]}


def main():
    fixtures, rounds, binaries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    work = tempfile.mkdtemp()
    set35 = quality.photos(fixtures, work) + quality.graphics(work, 6) + quality.screenshots(work, 6)
    hard = [path for path, _ in hard_images.make(fixtures, os.path.join(work, "hard"))]
    for r in range(rounds):
        for binary in binaries:
            run = subprocess.run([binary, "run", *(set35 + hard), "--chain", json.dumps(JOB), "--out", os.path.join(work, "out")],
                                 capture_output=True, text=True, check=True)
            reports = json.loads(run.stdout)
            ms = [{o["name"]: o["timings"]["encode"] for o in report["outputs"]} for report in reports]
            load = os.getloadavg()[0]

            def ratio(part):
                return sum(m["jpegauto"] for m in part) / sum(m["jpeg80"] for m in part)
            print(f"round {r + 1} {binary}: q_auto:good JPEG {ratio(ms[:len(set35)]):.2f}x one q_80 encode on the set of 35, "
                  f"{ratio(ms):.2f}x on all {len(ms)} (q_80 {sum(m['jpeg80'] for m in ms):.0f} ms in all; load average {load:.1f})",
                  flush=True)


if __name__ == "__main__":
    main()
