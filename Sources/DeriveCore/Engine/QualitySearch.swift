/// The bracketed search behind `q_auto`: the lowest quality whose encoding scores at least the
/// level's SSIMULACRA 2 target. It starts from a guess made from the image's complexity, steps
/// by the score's measured slope until the target is bracketed, then interpolates inside the
/// bracket; it stops when the bracket is `tolerance` wide or the encode budget is spent.
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

    /// Bracket width at which the search stops: one quality step is below what anyone sees.
    static let tolerance = 2

    /// `margin` raises the target, for searches on a sample that scores a little higher than
    /// the whole image does.
    public init(format: OutputFormat, level: AutoQuality, complexity: Double, maxEncodes: Int, margin: Double = 0) {
        self.format = format
        self.level = level
        self.target = Self.target(level, for: format) + margin
        self.range = Self.range(for: format)
        self.maxEncodes = max(1, maxEncodes)
        self.seed = Self.seed(level, for: format, complexity: complexity, range: range)
    }

    /// SSIMULACRA 2 targets per level (about 90 is visually lossless, 70 high quality, 50
    /// medium). The same for every format: the metric already weighs each format's kind of
    /// damage (JPEG's blocking and ringing, AVIF's smoothing).
    public static func target(_ level: AutoQuality, for format: OutputFormat) -> Double {
        switch level {
        case .best: 82
        case .good: 75
        case .eco: 68
        case .low: 60
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

    /// Where the search starts. Busy images (fine texture, noise) hide artifacts and need less
    /// quality; flat, smooth ones show every block and need more. `complexity` is the mean
    /// absolute difference of neighbouring luma values (0–255), about 2 for flat graphics,
    /// 5–15 for photographs and above 20 for noise.
    static func seed(_ level: AutoQuality, for format: OutputFormat, complexity: Double, range: ClosedRange<Int>) -> Int {
        let base: Double
        switch format {
        case .avif: base = 62
        case .jxl: base = 80
        default: base = 78
        }
        let levelShift: Double
        switch level {
        case .best: levelShift = 8
        case .good: levelShift = 0
        case .eco: levelShift = -7
        case .low: levelShift = -14
        }
        let busy = max(-1, min(1, (complexity - 8) / 12))
        return clamp(Int((base + levelShift - 8 * busy).rounded()), to: range)
    }

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
        guard trials.count < maxEncodes else { return nil }
        let tried = Set(trials.map(\.quality))
        let candidate: Int
        switch (failing, passing) {
        case let (low?, high?):
            guard high.quality - low.quality > Self.tolerance else { return nil }
            let span = high.score - low.score
            let fraction = span > 0 ? (target - low.score) / span : 0.5
            let estimate = Double(low.quality) + fraction * Double(high.quality - low.quality)
            // Lean up a little: landing just above the target ends the search sooner than
            // landing just below it.
            candidate = Self.clamp(Int(estimate.rounded(.up)) + 1, to: (low.quality + 1)...(high.quality - 1))
        case let (nil, high?):
            guard high.quality > range.lowerBound else { return nil }
            let steps = (high.score - target) / slope()
            candidate = Self.clamp(high.quality - max(Self.tolerance + 1, Int(steps.rounded())), to: range.lowerBound...(high.quality - 1))
        case let (low?, nil):
            guard low.quality < range.upperBound else { return nil }
            let steps = (target - low.score) / slope() + 1
            candidate = Self.clamp(low.quality + max(Self.tolerance + 1, Int(steps.rounded(.up))), to: (low.quality + 1)...range.upperBound)
        case (nil, nil):
            return nil
        }
        return tried.contains(candidate) ? nil : candidate
    }

    /// The score's slope measured from the trials so far (score per quality step).
    func slope() -> Double {
        let sorted = trials.sorted { $0.quality < $1.quality }
        guard let first = sorted.first, let last = sorted.last, last.quality > first.quality else { return Self.defaultSlope }
        let measured = (last.score - first.score) / Double(last.quality - first.quality)
        return max(0.15, min(3, measured))
    }

    /// The quality the output gets: the lowest that met the target, or the top of the range
    /// when none did within the budget.
    public var chosen: Int { passing?.quality ?? range.upperBound }

    static func clamp(_ value: Int, to range: ClosedRange<Int>) -> Int {
        min(range.upperBound, max(range.lowerBound, value))
    }
}
