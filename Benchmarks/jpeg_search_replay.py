#!/usr/bin/env python3
"""Replays q_auto's JPEG search on measured score curves (issue 29): how many trials on the
sample, how many searches again on the whole image, which quality and how many bytes, for the
rounds of two (before) and the probing search (after), on the tuning and reporting halves.

The curves come from a build with Benchmarks/jpeg_search_sweep.patch applied (`git apply` it
in a scratch checkout, `swift build -c release`): with DERIVE_QAUTO_SWEEP=1 every JPEG search
on a sample first encodes every quality of its range on the sample and on the whole output and
scores both, printing one `QSWEEP {json}` line to stderr. Run that binary as
quality_timing.py does (one `q_auto:good` JPEG output, `c_limit,w_1200,h_1200`, the 35 images
and the hard ones in that order), keeping the report and stderr:

    DERIVE_QAUTO_SWEEP=1 derive run IMAGES... --chain '{"outputs":[{"name":"auto",
        "chain":"c_limit,w_1200,h_1200","format":"jpeg","quality":"auto:good"}]}' --out OUT \
        > report.json 2> sweep.log
    python3 Benchmarks/jpeg_search_replay.py sweep.log report.json [--grid]

Halves: the set of 35 by position (even: tune, odd: report), the hard images by their own
split (Benchmarks/hard_images.py). Outputs searched whole (no sample) print no sweep and are
left out. The replay follows QualitySearch and AutoEncoder.bracketed/verified step by step;
its qualities and encode counts matched the built binaries on all 44 sampled outputs, before
and after. --grid prints the probing parameters tried on the tuning half.
"""
import json
import math
import sys


def round_half_away(x):
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


class Search:
    """QualitySearch: rounds of two (`next(count:)`), or probing (`probe`) with P["probing"]."""
    tolerance = 2

    def __init__(self, target, rng, budget, seed, P):
        self.target, self.range, self.max, self.P = target, rng, max(1, budget), P
        self.seed = max(rng[0], min(rng[1], seed))
        self.trials = []

    @staticmethod
    def clamp(v, r):
        return min(r[1], max(r[0], v))

    def passing(self):
        p = [t for t in self.trials if t[1] >= self.target]
        return min(p, key=lambda t: t[0]) if p else None

    def failing(self):
        f = [t for t in self.trials if t[1] < self.target]
        return max(f, key=lambda t: t[0]) if f else None

    def slope(self):
        st = sorted(self.trials)
        if not st or st[-1][0] <= st[0][0]:
            return self.P["defaultSlope"]
        return max(0.15, min(3, (st[-1][1] - st[0][1]) / (st[-1][0] - st[0][0])))

    def span(self):
        return self.P["probeSpan"] if self.P["probing"] else 8

    def estimate(self):
        lo, hi = self.failing(), self.passing()
        if lo and hi:
            if hi[0] - lo[0] <= self.tolerance:
                return None
            sp = hi[1] - lo[1]
            fr = (self.target - lo[1]) / sp if sp > 0 else 0.5
            return math.ceil(lo[0] + fr * (hi[0] - lo[0])), (lo[0] + 1, hi[0] - 1)
        if hi:
            if hi[0] <= self.range[0]:
                return None
            steps = min(self.P["longestStep"], (hi[1] - self.target) / self.slope())
            if steps < 0.5:
                return None
            return hi[0] - int(round_half_away(steps)), (self.range[0], hi[0] - 1)
        if lo:
            if lo[0] >= self.range[1] or (self.range[1] - lo[0]) * 2 * self.slope() < self.target - lo[1]:
                return None
            steps = min(self.P["longestStep"], (self.target - lo[1]) / self.slope() + 1)
            return lo[0] + math.ceil(steps), (lo[0] + 1, self.range[1])
        return None

    def probe(self):
        if not self.trials:
            return [self.seed]
        if len(self.trials) >= self.max:
            return []
        lo, hi = self.failing(), self.passing()
        P = self.P
        if lo and hi:
            if hi[0] - lo[0] <= P["probeSpan"]:
                return []
            sp = hi[1] - lo[1]
            fr = (self.target - lo[1]) / sp if sp > 0 else 0.5
            q = self.clamp(math.ceil(lo[0] + fr * (hi[0] - lo[0])) + 1, (lo[0] + 1, hi[0] - 1))
        elif hi:
            if hi[0] <= self.range[0]:
                return []
            steps = (hi[1] - self.target) / self.slope()
            if steps < 0.5:
                return []
            steps = min(P["longestStep"], steps + P["probeLean"])
            q = self.clamp(hi[0] - math.ceil(steps), (self.range[0], hi[0] - 1))
        elif lo:
            if lo[0] >= self.range[1] or (self.range[1] - lo[0]) * 2 * self.slope() < self.target - lo[1]:
                return []
            steps = min(P["longestStep"], (self.target - lo[1]) / self.slope() + P["probeLean"])
            q = self.clamp(lo[0] + math.ceil(steps), (lo[0] + 1, self.range[1]))
        else:
            return []
        return [] if any(t[0] == q for t in self.trials) else [q]

    def next(self, count):
        if self.P["probing"]:
            return self.probe()
        budget = min(count, self.max - len(self.trials))
        if budget <= 0:
            return []
        tried = {t[0] for t in self.trials}
        chosen = []
        lo, hi = self.failing(), self.passing()
        if lo and hi and lo[0] < hi[0]:
            if hi[0] - lo[0] <= 8:
                return []
            if hi[0] - lo[0] <= (budget + 1) * 8:
                for k in range(1, budget + 1):
                    q = lo[0] + int(round_half_away(k * (hi[0] - lo[0]) / (budget + 1)))
                    if lo[0] < q < hi[0] and q not in tried and q not in chosen:
                        chosen.append(q)
                return chosen
        if not self.trials:
            centre, allowed, offsets = self.seed, self.range, [-4, 4, 0]
        else:
            e = self.estimate()
            if e is None:
                return []
            (centre, allowed), offsets = e, [-2, 2, 0, -3, 3]
        for o in offsets:
            if len(chosen) >= budget:
                break
            q = self.clamp(centre + o, allowed)
            if q not in tried and q not in chosen:
                chosen.append(q)
        return sorted(chosen)

    def interpolated(self):
        lo, hi = self.failing(), self.passing()
        if not (lo and hi and lo[0] < hi[0] and hi[0] - lo[0] <= self.span()):
            return None
        sp = hi[1] - lo[1]
        fr = (self.target - lo[1]) / sp if sp > 0 else 1
        q = min(hi[0], max(lo[0] + 1, lo[0] + math.ceil(fr * (hi[0] - lo[0]))))
        if any(t[0] == q for t in self.trials):
            return None
        return q

    def chosen(self):
        i = self.interpolated()
        if i is not None:
            return i
        p = self.passing()
        return p[0] if p else self.range[1]


def bracketed(curve, target, rng, budget, seed, P, plateau, whole, known=()):
    """AutoEncoder.bracketed on a curve {quality: (score, bytes)}: (quality, trials, gave up)."""
    s = Search(target, rng, budget, seed, P)
    s.trials.extend(known)
    n = 0
    while True:
        qs = s.next(2)
        if not qs:
            break
        for q in qs:
            s.trials.append((q, *curve[q]))
            n += 1
        missed = [t for t in s.trials if t[1] < s.target]
        if plateau and s.passing() is None and missed:
            high = max(missed, key=lambda t: t[0])
            if any(high[0] - t[0] >= 10 and high[1] - t[1] < 1 for t in missed):
                return high[0], n, True
    if plateau and s.passing() is None and s.failing():
        return s.failing()[0], n, True
    q, est = s.chosen(), s.interpolated()
    if est is not None and whole:
        n += 1
        if curve[est][0] < s.target and s.passing():
            q = s.passing()[0]
    elif est is None and not any(t[0] == q for t in s.trials):
        n += 1
    return q, n, False


def seed(complexity, graphic, P):
    if graphic:
        return 60
    a, b = P["seedLine"]
    return round_half_away(a + b * math.log(max(1, min(25, complexity))))


def replay(sweeps, P, target=72.0):
    """One output: its sweeps (4:2:0 then 4:4:4, or 4:4:4 alone) replayed as AutoEncoder does."""
    first = sweeps[0]
    start = seed(first["complexity"], first["colours"] <= 1024, P)
    sample_trials, chosen = 0, first
    for i, sw in enumerate(sweeps):
        rng = (25, 89) if sw["plateau"] else (25, 96)
        curve = {r[0]: (r[1], r[2]) for r in sw["rows"]}
        q, n, gave_up = bracketed(curve, target + sw["margin"], rng, 16 - sample_trials, start, P, sw["plateau"], False)
        sample_trials += n
        chosen = sw
        if not gave_up or i == len(sweeps) - 1:
            break
    whole = {r[0]: (r[3], r[4]) for r in chosen["rows"]}
    q = min(q, max(whole))
    score, size = whole[q]
    out = dict(sample=sample_trials, again=False, whole_trials=0, q=q, score=score, bytes=size)
    if score < target - 0.5:
        rng = (25, 89) if chosen["plateau"] else (25, 96)
        q2, n2, _ = bracketed(whole, target, rng, 16, start, P, False, True, known=[(q, score, size)])
        out.update(again=True, whole_trials=n2, q=q2, score=whole[q2][0], bytes=whole[q2][1])
    return out


def load(log):
    sweeps = [json.loads(line.split(" ", 1)[1]) for line in open(log) if line.startswith("QSWEEP")]
    images = []
    for sw in sweeps:
        same = images and (sw["w"], sw["h"], sw["complexity"]) == (images[-1][0]["w"], images[-1][0]["h"], images[-1][0]["complexity"])
        if same and not sw["plateau"] and images[-1][-1]["plateau"]:
            images[-1].append(sw)
        else:
            images.append([sw])
    return images


def halves(report):
    """The half of each sampled output, from `derive run`'s report (in the order of the paths):
    the set of 35 by position (even: tune, odd: report), the hard images by their own split.
    Outputs no larger than the sample (512×256 pixels) are searched whole and have no sweep."""
    split = []
    for index, entry in enumerate(report):
        output = entry["outputs"][-1]
        if output["width"] * output["height"] <= 512 * 256:
            continue
        if index < 35:
            split.append("tune" if index % 2 == 0 else "report")
        else:
            split.append("tune" if "hard-tune" in entry["source"]["location"] else "report")
    return split


BEFORE = dict(probing=False, defaultSlope=0.6, longestStep=12, seedLine=(49, 10))
AFTER = dict(probing=True, defaultSlope=0.6, longestStep=12, seedLine=(61, 3.8), probeLean=3, probeSpan=10)


def summary(label, images, split, P):
    for half in ("tune", "report"):
        rows = [replay(im, P) for im, h in zip(images, split) if h == half]
        print(f"{label:8s} {half:6s} {len(rows)} outputs: {sum(r['sample'] for r in rows)} sample trials, "
              f"{sum(r['again'] for r in rows)} searched again ({sum(r['whole_trials'] for r in rows)} whole-image encodes), "
              f"{sum(r['bytes'] for r in rows):,} bytes, lowest {min(r['score'] for r in rows):.2f}")


def main():
    log, report = sys.argv[1], json.load(open(sys.argv[2]))
    images = load(log)
    split = halves(report)
    assert len(split) == len(images), f"{len(images)} sweeps for {len(split)} sampled outputs"
    summary("before", images, split, BEFORE)
    summary("after", images, split, AFTER)
    if "--grid" in sys.argv:
        for slope in (0.4, 0.5, 0.6, 0.7):
            for lean in (1, 2, 3, 4):
                for span in (8, 10, 12):
                    P = dict(AFTER, defaultSlope=slope, probeLean=lean, probeSpan=span)
                    rows = [replay(im, P) for im, h in zip(images, split) if h == "tune"]
                    cost = sum(2.3 * r["sample"] + 15 * r["whole_trials"] for r in rows) / len(rows)
                    print(f"tune slope {slope} lean {lean} span {span}: model {cost:.2f} ms a picture, "
                          f"{sum(r['sample'] for r in rows)} sample trials, {sum(r['again'] for r in rows)} searched again")


if __name__ == "__main__":
    main()
