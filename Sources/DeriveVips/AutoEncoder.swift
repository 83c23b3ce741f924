import DeriveCore
import Foundation

/// `q_auto` and `f_auto` by measurement: each candidate encoding is decoded and scored with
/// SSIMULACRA 2 against the pixels it was made from (`QualitySearch` picks the qualities);
/// `f_auto` keeps the smallest allowed format at the target. Every decision is written to the
/// output's choices: quality, score, encodes, and why a format won.
struct AutoEncoder {
    let settings: EngineSettings

    /// One format's search: the quality chosen, its score and bytes on the sample, and the
    /// encoded output when the sample was the whole image.
    struct Outcome {
        var format: OutputFormat
        var quality: Int?
        var score: Double?
        var sampleBytes: Int
        var data: [UInt8]?
        var encodes: Int
        var lossless: Bool
        var reached: Bool
    }

    /// Graphics with at most this many colours also try a lossless encoding.
    static let graphicColours = 1024

    /// `q_auto[:level]` for one concrete format.
    func search(_ image: VImage, encoding: EncodingSettings, level: AutoQuality, animated: Bool) throws(DeriveError) -> VipsEncoder.Encoded {
        if animated || !Self.searchable.contains(encoding.format) {
            return try fixed(image, encoding: encoding, level: level, why: animated
                ? "animations are not searched" : "\(encoding.format.rawValue) has no quality to search")
        }
        let reference = try PerceptualReference(image)
        var best = try searchQuality(reference, encoding: encoding, level: level)
        if reference.colours <= Self.graphicColours && encoding.format == .webp {
            let lossless = try losslessOutcome(reference, encoding: encoding)
            if lossless.sampleBytes < best.sampleBytes { best = lossless }
        }
        return try finish(best, reference: reference, encoding: encoding, level: level, extra: [])
    }

    /// `f_auto`: the smallest allowed format at the level's target. Animations keep an
    /// animated format and alpha keeps an alpha format.
    func chooseFormat(_ image: VImage, encoding: EncodingSettings, animated: Bool) throws(DeriveError) -> VipsEncoder.Encoded {
        var level = AutoQuality.good
        if case .auto(let chosen)? = encoding.quality { level = chosen }
        var allowed = settings.autoFormats.filter { $0.isConcrete }
        if allowed.isEmpty { allowed = EngineSettings.defaultAutoFormats }
        var notes: [String] = []
        if animated {
            let format = allowed.first { $0.canAnimate } ?? .webp
            return try fixedQuality(image, encoding: encoding.resolved(to: format), level: level,
                                    why: "format auto → \(format.rawValue): the output is animated")
        }
        if image.hasAlpha {
            let dropped = allowed.filter { !$0.supportsAlpha }
            allowed.removeAll { !$0.supportsAlpha }
            if allowed.isEmpty { allowed = [.webp, .png] }
            if !dropped.isEmpty { notes.append("\(dropped.map(\.rawValue).joined(separator: ", ")) left out: the image has alpha") }
        }
        let reference = try PerceptualReference(image)
        var outcomes: [Outcome] = []
        for format in allowed {
            let resolved = encoding.resolved(to: format)
            if case .value(let q)? = encoding.quality, Self.searchable.contains(format) {
                let data = try writeSample(reference, encoding: resolved, quality: q)
                outcomes.append(Outcome(format: format, quality: q, score: nil, sampleBytes: data.count,
                                        data: reference.isFull ? data : nil, encodes: 1, lossless: false, reached: true))
            } else if Self.searchable.contains(format) {
                outcomes.append(try searchQuality(reference, encoding: resolved, level: level))
            } else {
                outcomes.append(try losslessOutcome(reference, encoding: resolved))
            }
        }
        if reference.colours <= Self.graphicColours {
            if allowed.contains(.webp) { outcomes.append(try losslessOutcome(reference, encoding: encoding.resolved(to: .webp))) }
            if !allowed.contains(.png) { outcomes.append(try losslessOutcome(reference, encoding: encoding.resolved(to: .png))) }
        }
        guard let winner = outcomes.min(by: { $0.sampleBytes < $1.sampleBytes }) else {
            throw DeriveError(.internalError, "format auto had no format to choose from")
        }
        let sizes = outcomes.sorted { $0.sampleBytes < $1.sampleBytes }.map { o in
            "\(o.format.rawValue) \(o.lossless ? "lossless" : "q\(o.quality ?? 0)") \(Self.kilobytes(o.sampleBytes))"
        }
        let encodes = outcomes.reduce(0) { $0 + $1.encodes }
        let scope = reference.isFull ? "" : " on a sample of \(reference.tiles) tiles"
        let why = "format auto → \(winner.format.rawValue)\(winner.lossless ? " lossless" : ""): smallest at "
            + "\(encoding.quality.map { $0.text } ?? "auto:good")\(scope) (\(sizes.joined(separator: ", "))); \(encodes) trial encodes"
        var result = try finish(winner, reference: reference, encoding: encoding.resolved(to: winner.format), level: level, extra: [why] + notes)
        result.encodes += encodes - winner.encodes
        return result
    }

    static let searchable: Set<OutputFormat> = [.jpeg, .webp, .avif, .jxl]

    /// The bracketed search on the reference's sample.
    func searchQuality(_ reference: PerceptualReference, encoding: EncodingSettings, level: AutoQuality) throws(DeriveError) -> Outcome {
        var search = QualitySearch(format: encoding.format, level: level, complexity: reference.complexity,
                                   maxEncodes: settings.qualityMaxEncodes,
                                   margin: reference.isFull ? 0 : PerceptualReference.sampleMargin)
        var encoded: [Int: [UInt8]] = [:]
        while let quality = search.next() {
            let data = try writeSample(reference, encoding: encoding, quality: quality)
            let score = try reference.score(data, format: encoding.format)
            search.record(.init(quality: quality, score: score, bytes: data.count))
            encoded[quality] = data
        }
        let quality = search.chosen
        var encodes = search.trials.count
        var data = encoded[quality]
        var trial = search.trials.first { $0.quality == quality }
        if trial == nil {
            // Nothing met the target within the budget: the top of the range, measured too.
            let top = try writeSample(reference, encoding: encoding, quality: quality)
            trial = .init(quality: quality, score: try reference.score(top, format: encoding.format), bytes: top.count)
            data = top
            encodes += 1
        }
        return Outcome(format: encoding.format, quality: quality, score: trial?.score, sampleBytes: trial?.bytes ?? 0,
                       data: reference.isFull ? data : nil, encodes: encodes, lossless: false,
                       reached: (trial?.score ?? 0) >= search.target)
    }

    func losslessOutcome(_ reference: PerceptualReference, encoding: EncodingSettings) throws(DeriveError) -> Outcome {
        var settings = encoding
        settings.lossless = encoding.format != .png
        var choices: [String] = []
        let data = try VipsEncoder.write(reference.sample, settings: settings, quality: encoding.format == .png ? 100 : nil, choices: &choices)
        return Outcome(format: encoding.format, quality: nil, score: 100, sampleBytes: data.count,
                       data: reference.isFull ? data : nil, encodes: 1, lossless: true, reached: true)
    }

    func writeSample(_ reference: PerceptualReference, encoding: EncodingSettings, quality: Int) throws(DeriveError) -> [UInt8] {
        var choices: [String] = []
        return try VipsEncoder.write(reference.sample, settings: encoding, quality: quality, choices: &choices)
    }

    /// The output itself: the search's own encoding when it ran on the whole image, otherwise
    /// one more encode of the whole at the quality found.
    func finish(_ outcome: Outcome, reference: PerceptualReference, encoding: EncodingSettings, level: AutoQuality,
                extra: [String]) throws(DeriveError) -> VipsEncoder.Encoded {
        var settings = encoding
        settings.format = outcome.format
        settings.lossless = outcome.lossless && outcome.format != .png
        var choices = extra
        var data = outcome.data
        var encodes = outcome.encodes
        if data == nil {
            data = try VipsEncoder.write(reference.full, settings: settings,
                                         quality: outcome.lossless ? (outcome.format == .png ? 100 : nil) : outcome.quality,
                                         choices: &choices)
            encodes += 1
        }
        let scope = reference.isFull ? ""
            : " on a sample of \(reference.tiles) \(QualitySearch.tileDescription) tiles (searched at +\(Self.decimal(PerceptualReference.sampleMargin)))"
        let target = QualitySearch.target(level, for: outcome.format)
        if outcome.lossless {
            choices.append("quality auto:\(level.rawValue) → lossless \(outcome.format.rawValue): smaller than lossy at "
                           + "SSIMULACRA 2 target \(Self.decimal(target))\(scope) (\(reference.colours) colours)")
        } else if let quality = outcome.quality, let score = outcome.score {
            let verdict = outcome.reached ? "reached" : "target not reached within \(self.settings.qualityMaxEncodes) encodes; reached"
            choices.append("quality auto:\(level.rawValue) → \(quality): SSIMULACRA 2 target \(Self.decimal(target)), "
                           + "\(verdict) \(Self.decimal(score))\(scope); \(encodes) encodes")
        }
        return VipsEncoder.Encoded(data: data ?? [], format: outcome.format, quality: outcome.lossless ? nil : outcome.quality,
                                   choices: choices, score: outcome.score, encodes: encodes)
    }

    /// Animations (and formats without a quality) keep the fixed table of `AutoDefaults`.
    func fixed(_ image: VImage, encoding: EncodingSettings, level: AutoQuality, why: String) throws(DeriveError) -> VipsEncoder.Encoded {
        try fixedQuality(image, encoding: encoding, level: level, why: nil, note: why)
    }

    func fixedQuality(_ image: VImage, encoding: EncodingSettings, level: AutoQuality, why: String?,
                      note: String? = nil) throws(DeriveError) -> VipsEncoder.Encoded {
        var choices: [String] = why.map { [$0] } ?? []
        var quality: Int?
        switch encoding.quality {
        case .value(let q)?: quality = q
        default:
            quality = AutoDefaults.quality(level, for: encoding.format)
            choices.append("quality auto:\(level.rawValue) → \(quality ?? 0) (fixed: \(note ?? "animations are not searched"))")
        }
        let data = try VipsEncoder.write(image, settings: encoding, quality: quality, choices: &choices)
        return VipsEncoder.Encoded(data: data, format: encoding.format, quality: encoding.lossless ? nil : quality,
                                   choices: choices, score: nil, encodes: 1)
    }

    static func kilobytes(_ bytes: Int) -> String { "\(decimal(Double(bytes) / 1000)) kB" }

    static func decimal(_ value: Double) -> String { String(format: "%.1f", value) }
}

extension QualitySearch {
    static let tileDescription = "\(PerceptualReference.tileSide)×\(PerceptualReference.tileSide)"
}

extension EncodingSettings {
    /// These settings with `auto` format and quality replaced by what an encode chose.
    func learned(from metadata: OutputMetadata) -> EncodingSettings {
        var fixed = self
        if format == .auto || format == .original { fixed.format = metadata.format }
        if case .auto? = quality {
            if let q = metadata.quality { fixed.quality = .value(q) } else { fixed.lossless = true; fixed.quality = nil }
        } else if format == .auto && metadata.quality == nil {
            fixed.lossless = metadata.format != .png
        }
        return fixed
    }
}
