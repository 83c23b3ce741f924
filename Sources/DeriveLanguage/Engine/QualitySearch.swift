import Foundation

/// The bracketed search behind `q_auto`: the lowest quality whose encoding scores at least the
/// level's SSIMULACRA 2 target. It starts from a guess made from the kind of image, steps
/// by the score's measured slope until the target is bracketed, then interpolates inside the
/// bracket; it stops when the bracket is `tolerance` wide (one encode at a time) or
/// `interpolationSpan` wide (two at a time), or when the encode budget is spent. A probing
/// search (JPEG's) places one encode at a time where the last ones point, a little past the
/// target so that it brackets it, and ends at `probeSpan`.
/// The engine encodes and scores; this decides which quality to try next.
public struct QualitySearch: Sendable {
    /// One encode: its quality and the score it reached.
    public struct Trial: Sendable, Hashable {
        public var quality: Int
        public var score: Double
        public var bytes: Int

        public init(quality: Int, score: Double, bytes: Int) {
            self.quality = quality
            self.score = score
            self.bytes = bytes
        }
    }

    public let format: OutputFormat
    public let level: AutoQuality
    public let target: Double
    public let range: ClosedRange<Int>
    public let maxEncodes: Int
    public private(set) var trials: [Trial] = []
    let seed: Int
    /// One encode at a time, each aimed by the score's deficit and slope (`probe`), instead of
    /// rounds around the seed: fewer encodes where each costs more than the time it saves by
    /// running beside another (JPEG, whose candidates are cheap next to their scores).
    public let probing: Bool

    /// Bracket width at which the search stops: one quality step is below what anyone sees.
    static let tolerance = 2

    /// `margin` raises the target, for searches on a sample that scores a little higher than
    /// the whole image does.
    /// `range` narrows the qualities searched (the whole of `range(for:)` by default).
    /// `hint`, the quality a search of the same image found at another size (a wider
    /// breakpoint of the same output), replaces the seed: it is usually within a round.
    /// `probing`: one encode at a time, aimed (`probe`).
    public init(format: OutputFormat, level: AutoQuality, complexity: Double, graphic: Bool = false, maxEncodes: Int,
                margin: Double = 0, range: ClosedRange<Int>? = nil, hint: Int? = nil, probing: Bool = false) {
        self.format = format
        self.probing = probing
        self.level = level
        self.target = Self.target(level, for: format) + margin
        self.range = range ?? Self.range(for: format)
        self.maxEncodes = max(1, maxEncodes)
        let range = self.range
        self.seed = hint.map { Self.clamp($0, to: range) }
            ?? Self.seed(level, for: format, complexity: complexity, graphic: graphic, range: range)
    }

    /// SSIMULACRA 2 targets per level (about 90 is visually lossless, 70 high quality, 50
    /// medium). The same for every format: the metric already weighs each format's kind of
    /// damage (JPEG's blocking and ringing, AVIF's smoothing).
    public static func target(_ level: AutoQuality, for format: OutputFormat) -> Double {
        switch level {
        case .best: 80
        case .good: 72
        case .eco: 65
        case .low: 58
        }
    }

    /// The qualities searched: below these every format falls apart, above them files grow
    /// for no visible gain.
    public static func range(for format: OutputFormat) -> ClosedRange<Int> {
        switch format {
        case .avif: 15...90
        case .jxl: 20...98
        default: 25...96
        }
    }

    /// Where the search starts: where each level ended on the benchmark's images of the same
    /// kind (Benchmarks/quality.sh). Graphics (few colours: text, flat fills) keep their
    /// score at far lower WebP and AVIF qualities than photographs. For JPEG photographs
    /// texture costs quality, not the reverse: smooth photos reach `good` near 57, busy ones
    /// near 80. `complexity` is the mean absolute difference of neighbouring luma values
    /// (0–255): about 1 for flat graphics, 2–10 for photographs, above 20 for noise.
    ///
    /// `good`'s JPEG line for photographs was refitted (issue 29) to where the lowest passing
    /// quality of each image's sample lay on the benchmark's tuning half (every quality of each
    /// sample scored): 61 + 3.8 ln(complexity), residual deviation 6.4. Texture alone predicts
    /// it poorly, which is why the probing search aims its second encode by the first's score.
    ///
    /// JPEG's levels are apart by more than a fixed shift (the quality a score needs grows
    /// faster towards the top: `best` is 15–19 above `good` on photographs, `low` 20–35
    /// below it), so each has its own line, fitted to where the benchmark's searches ended
    /// (seeds that put the lowest passing quality within the first round's bracket: 20, 22,
    /// 23 and 23 of its 35 images for `good`, `best`, `eco` and `low`, against 18, 2, 3 and 3
    /// with `good`'s line shifted 8 up, 7 and 14 down). The other formats shift `good`'s.
    static func seed(_ level: AutoQuality, for format: OutputFormat, complexity: Double, graphic: Bool,
                     range: ClosedRange<Int>) -> Int {
        if format == .jpeg {
            let texture = log(max(1, min(25, complexity)))
            let seed: Double
            switch (level, graphic) {
            case (.best, true): seed = 77
            case (.best, false): seed = 68 + 8 * texture
            case (.good, true): seed = 60
            case (.good, false): seed = 61 + 3.8 * texture
            case (.eco, true): seed = 39
            case (.eco, false): seed = 35 + 8 * texture
            case (.low, true): seed = 31
            case (.low, false): seed = 33 + 2 * texture
            }
            return clamp(Int(seed.rounded()), to: range)
        }
        let base: Double
        switch (format, graphic) {
        case (.avif, false): base = 56
        case (.avif, true): base = 30
        case (.webp, false): base = 80
        case (.webp, true): base = 38
        case (.jxl, _): base = 68
        case (_, true): base = 60
        default: base = 52 + 10 * log(max(1, min(25, complexity)))
        }
        let levelShift: Double
        switch level {
        case .best: levelShift = 8
        case .good: levelShift = 0
        case .eco: levelShift = -7
        case .low: levelShift = -14
        }
        return clamp(Int((base + levelShift).rounded()), to: range)
    }

    /// The most one extrapolation moves: scores flatten towards the top of the range, where
    /// the slope is first measured, so a long extrapolation downwards overshoots.
    static let longestStep = 12

    /// Score gained per quality step when only one side of the bracket is known.
    static let defaultSlope = 0.6

    public mutating func record(_ trial: Trial) {
        trials.append(trial)
    }

    /// The lowest quality tried that met the target.
    public var passing: Trial? {
        trials.filter { $0.score >= target }.min { $0.quality < $1.quality }
    }

    /// The highest quality tried that missed it.
    public var failing: Trial? {
        trials.filter { $0.score < target }.max { $0.quality < $1.quality }
    }

    /// The next quality to encode, or nil when the search is done.
    public func next() -> Int? {
        guard !trials.isEmpty else { return seed }
        guard trials.count < maxEncodes, let (estimate, allowed) = estimate() else { return nil }
        let tried = Set(trials.map(\.quality))
        let candidate: Int
        switch (failing, passing) {
        case (_?, _?):
            // Lean up a little: landing just above the target ends the search sooner than
            // landing just below it.
            candidate = Self.clamp(estimate + 1, to: allowed)
        case let (nil, high?):
            candidate = Self.clamp(min(estimate, high.quality - (Self.tolerance + 1)), to: allowed)
        case let (low?, nil):
            candidate = Self.clamp(max(estimate, low.quality + Self.tolerance + 1), to: allowed)
        case (nil, nil):
            return nil
        }
        return tried.contains(candidate) ? nil : candidate
    }

    /// The next qualities to encode at once, at most `count` (and never past the budget);
    /// empty when the search is done. Two at a time, the first round tries the seed `spread`
    /// either side; once the target is bracketed no wider than `interpolationSpan`, the search
    /// ends and the quality is interpolated inside the bracket (`chosen`); a wider bracket is
    /// split evenly, and any other round tries its estimate of the lowest passing quality a
    /// step either side. A good seed ends the search in one round.
    public func next(count: Int) -> [Int] {
        if probing { return probe().map { [$0] } ?? [] }
        guard count > 1 else { return next().map { [$0] } ?? [] }
        let budget = min(count, maxEncodes - trials.count)
        guard budget > 0 else { return [] }
        let tried = Set(trials.map(\.quality))
        var chosen: [Int] = []
        if let low = failing?.quality, let high = passing?.quality, low < high {
            guard high - low > Self.interpolationSpan else { return [] }
            // Split evenly when that leaves pieces no wider than the span; a wider bracket is
            // first narrowed around its estimate.
            if high - low <= (budget + 1) * Self.interpolationSpan {
                for k in 1...budget {
                    let quality = low + Int((Double(k * (high - low)) / Double(budget + 1)).rounded())
                    if quality > low && quality < high && !tried.contains(quality) && !chosen.contains(quality) { chosen.append(quality) }
                }
                return chosen
            }
        }
        let centre: Int, allowed: ClosedRange<Int>, offsets: [Int]
        if trials.isEmpty {
            (centre, allowed, offsets) = (seed, range, [-Self.spread, Self.spread, 0])
        } else {
            guard let (estimate, within) = estimate() else { return [] }
            (centre, allowed, offsets) = (estimate, within, [-2, 2, 0, -3, 3])
        }
        for offset in offsets where chosen.count < budget {
            let quality = Self.clamp(centre + offset, to: allowed)
            if !tried.contains(quality) && !chosen.contains(quality) { chosen.append(quality) }
        }
        return chosen.sorted()
    }

    /// How far either side of the seed the first round of a parallel search goes.
    static let spread = 4

    /// The widest bracket a parallel search ends in, interpolating rather than encoding inside
    /// it: between two measured qualities this close the score is near enough to a straight
    /// line (and JPEG's curve bends the safe way: a little above the line).
    static let interpolationSpan = 8

    /// The widest bracket a probing search ends in. Wider than `interpolationSpan`: its probes
    /// are aimed to land just past the target, and score curves bend the safe way (above the
    /// straight line between a bracket's ends), so a wider bracket costs a little in bytes,
    /// never in score; on the benchmark's tuning half 8 left more searches a third encode.
    static let probeSpan = 10

    /// How far past the estimated crossing a probe aims, in qualities (`probe`): far enough
    /// that most second probes bracket the target, near enough that the bracket stays within
    /// `probeSpan`.
    static let probeLean = 3

    /// The bracket a search ends in and interpolates inside.
    var span: Int { probing ? Self.probeSpan : Self.interpolationSpan }

    /// The next quality of a probing search, or nil when it is done: the seed first; then,
    /// with the target on one side of all trials, the quality the slope (measured, or
    /// `defaultSlope`) says meets it, `probeLean` further on; inside a bracket wider than
    /// `probeSpan`, the interpolated crossing (one up). Budget, range and the early stops of
    /// `estimate` (a pass less than half a step above the target, a target out of reach) hold.
    func probe() -> Int? {
        guard !trials.isEmpty else { return seed }
        guard trials.count < maxEncodes else { return nil }
        let candidate: Int
        switch (failing, passing) {
        case let (low?, high?):
            guard high.quality - low.quality > Self.probeSpan else { return nil }
            let span = high.score - low.score
            let fraction = span > 0 ? (target - low.score) / span : 0.5
            let estimate = Int((Double(low.quality) + fraction * Double(high.quality - low.quality)).rounded(.up)) + 1
            candidate = Self.clamp(estimate, to: (low.quality + 1)...(high.quality - 1))
        case let (nil, high?):
            guard high.quality > range.lowerBound else { return nil }
            let steps = (high.score - target) / slope()
            guard steps >= 0.5 else { return nil }
            let leaned = min(Double(Self.longestStep), steps + Double(Self.probeLean))
            candidate = Self.clamp(high.quality - Int(leaned.rounded(.up)), to: range.lowerBound...(high.quality - 1))
        case let (low?, nil):
            guard low.quality < range.upperBound,
                  Double(range.upperBound - low.quality) * 2 * slope() >= target - low.score else { return nil }
            let leaned = min(Double(Self.longestStep), (target - low.score) / slope() + Double(Self.probeLean))
            candidate = Self.clamp(low.quality + Int(leaned.rounded(.up)), to: (low.quality + 1)...range.upperBound)
        case (nil, nil):
            return nil
        }
        return trials.contains { $0.quality == candidate } ? nil : candidate
    }

    /// The estimated lowest passing quality (not yet clamped) and the qualities still worth
    /// trying, or nil when the bracket is narrow enough or the range is exhausted.
    func estimate() -> (Int, ClosedRange<Int>)? {
        switch (failing, passing) {
        case let (low?, high?):
            guard high.quality - low.quality > Self.tolerance else { return nil }
            let span = high.score - low.score
            let fraction = span > 0 ? (target - low.score) / span : 0.5
            let estimate = Double(low.quality) + fraction * Double(high.quality - low.quality)
            let allowed = (low.quality + 1)...(high.quality - 1)
            return (Int(estimate.rounded(.up)), allowed)
        case let (nil, high?):
            guard high.quality > range.lowerBound else { return nil }
            let steps = min(Double(Self.longestStep), (high.score - target) / slope())
            // Less than half a step above the target: the quality below would miss it, and
            // another round would only confirm that.
            guard steps >= 0.5 else { return nil }
            let allowed = range.lowerBound...(high.quality - 1)
            return (high.quality - Int(steps.rounded()), allowed)
        case let (low?, nil):
            guard low.quality < range.upperBound else { return nil }
            // Out of reach even at twice the measured slope: the top of the range would miss
            // too (a 4:2:0 search then gives way to whole chroma at once).
            guard Double(range.upperBound - low.quality) * 2 * slope() >= target - low.score else { return nil }
            let steps = min(Double(Self.longestStep), (target - low.score) / slope() + 1)
            let allowed = (low.quality + 1)...range.upperBound
            return (low.quality + Int(steps.rounded(.up)), allowed)
        case (nil, nil):
            return nil
        }
    }

    /// The score's slope measured from the trials so far (score per quality step).
    func slope() -> Double {
        let sorted = trials.sorted { $0.quality < $1.quality }
        guard let first = sorted.first, let last = sorted.last, last.quality > first.quality else { return Self.defaultSlope }
        let measured = (last.score - first.score) / Double(last.quality - first.quality)
        return max(0.15, min(3, measured))
    }

    /// The quality the output gets: inside a bracket no wider than `span`, the
    /// quality where the line between its ends meets the target (rounded up); otherwise the
    /// lowest that met it, or the top of the range when none did within the budget.
    public var chosen: Int { interpolated?.quality ?? passing?.quality ?? range.upperBound }

    /// The interpolated choice and its estimated score and bytes, when it was not itself
    /// encoded (nil when the choice was measured).
    public var interpolated: Trial? {
        guard let low = failing, let high = passing, low.quality < high.quality,
              high.quality - low.quality <= span else { return nil }
        let span = high.score - low.score
        let fraction = span > 0 ? (target - low.score) / span : 1
        let quality = min(high.quality, max(low.quality + 1, low.quality + Int((fraction * Double(high.quality - low.quality)).rounded(.up))))
        guard !trials.contains(where: { $0.quality == quality }) else { return nil }
        let along = Double(quality - low.quality) / Double(high.quality - low.quality)
        return Trial(quality: quality, score: low.score + along * span,
                     bytes: low.bytes + Int((along * Double(high.bytes - low.bytes)).rounded()))
    }

    static func clamp(_ value: Int, to range: ClosedRange<Int>) -> Int {
        min(range.upperBound, max(range.lowerBound, value))
    }
}
