import DeriveLanguage
import Foundation
import Synchronization

/// `q_auto` and `f_auto` by measurement: each candidate encoding is decoded and scored with
/// SSIMULACRA 2 against the pixels it was made from (`QualitySearch` picks the qualities);
/// `f_auto` keeps the smallest allowed format at the target. Every decision is written to the
/// output's choices: quality, score, encodes, and why a format won.
struct AutoEncoder {
    let settings: EngineSettings
    /// Qualities searches of the same output found at a wider breakpoint, by format: each
    /// narrower width starts its search there.
    var hints: [OutputFormat: Int] = [:]
    /// JPEG candidates on a sample (never stored) are encoded by libjpeg-turbo directly, with
    /// jpegsave's pixels: for `q_auto` in JPEG, whose choice reads only their scores. `f_auto`
    /// keeps jpegsave's, whose sizes (metadata included) it compares with other formats'.
    var directJPEGSamples = false

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
        /// The search stopped because an encoding that missed the target was already larger
        /// than another format's: this format cannot be the smallest.
        var outclassed = false
        /// JPEG and AVIF chroma: `.full` (4:4:4) when no subsampled quality met the target.
        var chroma: ChromaSubsampling = .auto
        /// The measured qualities the chosen one was interpolated between (its score and bytes
        /// are then estimates), or nil when the chosen quality was encoded and scored.
        var interpolatedFrom: (QualitySearch.Trial, QualitySearch.Trial)?
    }

    /// Candidates encoded and scored at once: two when the slot has two or more libvips
    /// threads (`DERIVE_VIPS_CONCURRENCY`; every core for `derive run`), else one. Each
    /// encoder runs on one thread, so two keep two cores busy without taking another slot's.
    var width: Int {
        let threads = settings.concurrency > 0 ? settings.concurrency : ProcessInfo.processInfo.activeProcessorCount
        return min(2, max(1, threads))
    }

    /// Graphics with at most this many colours also try a lossless encoding.
    static let graphicColours = 1024

    /// `q_auto[:level]` for one concrete format.
    func search(_ image: VImage, encoding: EncodingSettings, level: AutoQuality, animated: Bool) throws(DeriveError) -> VipsEncoder.Encoded {
        if animated || !Self.searchable.contains(encoding.format) {
            return try fixed(image, encoding: encoding, level: level, why: animated
                ? "animations are not searched" : "\(encoding.format.rawValue) has no quality to search")
        }
        if encoding.format == .jpeg && !directJPEGSamples {
            var direct = self
            direct.directJPEGSamples = true
            return try direct.search(image, encoding: encoding, level: level, animated: animated)
        }
        let reference = try PerceptualReference(image, sampling: encoding.format == .jpeg ? .jpeg : .standard, threads: width)
        var lossless: Outcome?
        if reference.colours <= Self.graphicColours && encoding.format == .webp {
            lossless = try losslessOutcome(reference, encoding: encoding)
        }
        var best = try searchQuality(reference, encoding: encoding, level: level, graphic: reference.colours <= Self.graphicColours,
                                     budget: max(1, settings.qualityMaxEncodes - (lossless?.encodes ?? 0)), beat: lossless?.sampleBytes,
                                     chromaBound: try Self.chromaBound(reference, formats: [encoding.format], encoding: encoding))
        if let lossless, best.outclassed || lossless.sampleBytes < best.sampleBytes {
            best = Outcome(format: lossless.format, quality: nil, score: 100, sampleBytes: lossless.sampleBytes, data: lossless.data,
                           encodes: lossless.encodes + best.encodes, lossless: true, reached: true)
        } else {
            best.encodes += lossless?.encodes ?? 0
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
        let reference = try PerceptualReference(image, threads: width)
        // Lossless candidates first: one encode each, and for a graphic often the size the
        // lossy searches must beat, which stops them early.
        var lossless = allowed.filter { !Self.searchable.contains($0) }
        if reference.colours <= Self.graphicColours {
            if allowed.contains(.webp) { lossless.insert(.webp, at: 0) }
            if !lossless.contains(.png) { lossless.append(.png) }
        }
        var outcomes: [Outcome] = []
        for format in lossless {
            outcomes.append(try losslessOutcome(reference, encoding: encoding.resolved(to: format)))
        }
        // The lossy formats share the output's encode budget in the order allowed (the likely
        // smallest first): each may spend what is left but one round of two for each after it.
        var lossy = allowed.filter { Self.searchable.contains($0) }
        if case .value? = encoding.quality {} else if let prediction = Self.predict(lossy, reference: reference) {
            lossy = prediction.formats
            notes.append(prediction.note)
        }
        var remaining = settings.qualityMaxEncodes - outcomes.count
        var chromaBound: Double?
        if case .value? = encoding.quality {} else {
            chromaBound = try Self.chromaBound(reference, formats: lossy, encoding: encoding)
        }
        for (index, format) in lossy.enumerated() {
            let resolved = encoding.resolved(to: format)
            let smallest = outcomes.filter { !$0.outclassed }.map(\.sampleBytes).min()
            if case .value(let q)? = encoding.quality {
                let data = try writeSample(reference, encoding: resolved, quality: q)
                outcomes.append(Outcome(format: format, quality: q, score: nil, sampleBytes: data.count,
                                        data: reference.isFull ? data : nil, encodes: 1, lossless: false, reached: true))
            } else {
                let share = max(1, remaining - 2 * (lossy.count - index - 1))
                outcomes.append(try searchQuality(reference, encoding: resolved, level: level, graphic: reference.colours <= Self.graphicColours,
                                                  budget: share, beat: smallest, chromaBound: chromaBound))
            }
            remaining -= outcomes[outcomes.count - 1].encodes
        }
        guard var winner = outcomes.filter({ !$0.outclassed }).min(by: { $0.sampleBytes < $1.sampleBytes }) else {
            throw DeriveError(.internalError, "format auto had no format to choose from")
        }
        var reason = "smallest at"
        if !winner.lossless, reference.colours <= Self.graphicColours,
           let lossless = outcomes.filter(\.lossless).min(by: { $0.sampleBytes < $1.sampleBytes }),
           Double(lossless.sampleBytes) <= Self.losslessGraphicRatio * Double(winner.sampleBytes),
           Double(lossless.sampleBytes * 8) <= Self.losslessGraphicBits * Double(reference.sample.width * reference.sample.height) {
            reason = "a graphic (\(reference.colours) colours), lossless within \(Int(Self.losslessGraphicRatio))x of the smallest "
                + "and under \(String(format: "%.2f", Self.losslessGraphicBits)) bits a pixel at"
            winner = lossless
        }
        let sizes = outcomes.sorted { ($0.outclassed ? 1 : 0, $0.sampleBytes) < ($1.outclassed ? 1 : 0, $1.sampleBytes) }.map { o in
            o.outclassed ? "\(o.format.rawValue) stopped: q\(o.quality ?? 0) misses the target at \(Self.kilobytes(o.sampleBytes))"
                : "\(o.format.rawValue) \(o.lossless ? "lossless" : "q\(o.quality ?? 0)") \(Self.kilobytes(o.sampleBytes))"
        }
        let encodes = outcomes.reduce(0) { $0 + $1.encodes }
        let scope = reference.isFull ? "" : " on a sample of \(reference.tiles) tiles"
        let why = "format auto → \(winner.format.rawValue)\(winner.lossless ? " lossless" : ""): \(reason) "
            + "\(encoding.quality.map { $0.text } ?? "auto:good")\(scope) (\(sizes.joined(separator: ", "))); \(encodes) trial encodes"
        var result = try finish(winner, reference: reference, encoding: encoding.resolved(to: winner.format), level: level, extra: [why] + notes)
        result.encodes += encodes - winner.encodes
        return result
    }

    static let searchable: Set<OutputFormat> = [.jpeg, .webp, .avif, .jxl]

    /// The formats `f_auto` predicts cannot win, left out before anything is encoded: on a
    /// photograph (more colours than a graphic) with AVIF allowed, WebP and JPEG. At the same
    /// whole-image SSIMULACRA 2 every photograph of the benchmark took more bytes in each than
    /// in AVIF at its default effort (`predictionMargins`, Benchmarks/RESULTS.md, issue 40), so
    /// their searches only cost time. Graphics, where lossless and WebP often win, and JPEG XL
    /// are always searched; the whole-image check still decides the quality.
    static func predict(_ formats: [OutputFormat], reference: PerceptualReference) -> (formats: [OutputFormat], note: String)? {
        guard reference.colours > graphicColours, formats.contains(.avif) else { return nil }
        let left = formats.filter { predictionMargins[$0] != nil }
        guard !left.isEmpty else { return nil }
        let margins = left.map { "\($0.rawValue) \(predictionMargins[$0]!)" }.joined(separator: ", ")
        return (formats.filter { predictionMargins[$0] == nil },
                "\(left.map(\.rawValue).joined(separator: ", ")) not tried: a photograph (more than \(graphicColours) colours), "
                + "where avif was the smallest at the target on every photograph of the benchmark (\(margins) its bytes at the least)")
    }

    /// The fewest bytes each left-out format took against AVIF's at the same score (their
    /// default efforts), over the photographs `Benchmarks/encoders.py` measured.
    static let predictionMargins: [OutputFormat: String] = [.webp: "1.3x", .jpeg: "1.1x"]

    /// `f_auto` keeps a graphic (at most `graphicColours` colours) lossless when that costs at
    /// most this many times the smallest lossy encoding at the target. Lossy encodings of flat
    /// fills and text ring around every hard edge, which SSIMULACRA 2 forgives more than
    /// Butteraugli does: on the benchmark's logos and icon grids AVIF at the `good` target
    /// scored 76 by SSIMULACRA 2 but 2.0–2.8 by Butteraugli's 3-norm (above 2, visibly
    /// damaged), where lossless WebP was 1.7–2.4x their bytes, still a few kilobytes.
    static let losslessGraphicRatio = 3.0
    /// ... and when lossless costs little in itself: at most this many bits a pixel. The
    /// benchmark's logos and icon grids took 0.04–0.11 lossless; its screenshots, whose text
    /// Butteraugli found undamaged at the lossy choice (1.2–1.4), 0.6, and 2.5–3.1x the bytes:
    /// without this bound `f_auto` stored 0.52 of `q_80`'s bytes instead of 0.45.
    static let losslessGraphicBits = 0.15

    /// `q_auto` for one format on the reference's sample, at most `budget` encodes.
    ///
    /// libvips subsamples JPEG and AVIF chroma (4:2:0) below quality 90 and keeps it whole
    /// above. Their search therefore stays below 90 first; when nothing there meets the target
    /// (saturated colour edges, as in charts and logos), it searches again with whole chroma
    /// (4:4:4) from the bottom of the range, usually far smaller than 4:2:0 at 90. The 4:2:0
    /// search is skipped when halving the chroma alone (`chromaBound`) already costs nearly
    /// all the score the target leaves, and ended early when scores stay flat while failing
    /// (under a point over ten quality steps).
    func searchQuality(_ reference: PerceptualReference, encoding: EncodingSettings, level: AutoQuality, graphic: Bool,
                       budget: Int, beat: Int? = nil, chromaBound: Double? = nil) throws(DeriveError) -> Outcome {
        let range = QualitySearch.range(for: encoding.format)
        guard Self.subsampledBelowFullChroma.contains(encoding.format), encoding.chromaSubsampling == .auto else {
            return try bracketed(reference, encoding: encoding, level: level, graphic: graphic, budget: budget, beat: beat)
        }
        var full = encoding
        full.chromaSubsampling = .full
        var spent = 0
        let margin = reference.margin(for: encoding.format)
        if (chromaBound ?? 100) >= QualitySearch.target(level, for: encoding.format) + margin + Self.chromaSlack {
            let subsampled = try bracketed(reference, encoding: encoding, level: level, graphic: graphic, budget: budget, beat: beat,
                                           range: range.lowerBound...min(range.upperBound, Self.fullChroma - 1), plateau: true)
            guard !subsampled.reached, !subsampled.outclassed, budget - subsampled.encodes >= 1 else { return subsampled }
            spent = subsampled.encodes
        }
        var whole = try bracketed(reference, encoding: full, level: level, graphic: graphic, budget: budget - spent, beat: beat)
        whole.encodes += spent
        whole.chroma = .full
        return whole
    }

    /// How far above the search's target halved chroma alone must score for a 4:2:0 search:
    /// on saturated images 4:2:0 at quality 89 scored 3.5–5.5 points below that bound.
    static let chromaSlack = 4.0

    /// The score of the sample with only its chroma halved, for JPEG and AVIF searches of
    /// graphics. Photographs rarely have the saturated edges that 4:2:0 cannot keep, and when
    /// they do the 4:2:0 search ends on its plateau; a score of their own would cost more
    /// than it saves.
    static func chromaBound(_ reference: PerceptualReference, formats: [OutputFormat],
                            encoding: EncodingSettings) throws(DeriveError) -> Double? {
        guard encoding.chromaSubsampling == .auto, reference.colours <= graphicColours,
              formats.contains(where: { subsampledBelowFullChroma.contains($0) }) else { return nil }
        return try reference.subsampledChromaScore()
    }

    /// The quality from which libvips keeps whole chroma (`subsample_mode` auto), and the
    /// formats it applies to.
    static let fullChroma = 90
    static let subsampledBelowFullChroma: Set<OutputFormat> = [.jpeg, .avif]
    static let plateauSteps = 10

    /// The bracketed search, two candidates a round where the slot has the threads. With
    /// `beat` (another format's size), it stops as soon as an encoding that misses the target
    /// is already that large: sizes grow with quality, so this format cannot be the smallest.
    /// `known`: encodes already measured on `reference` (the output a sample's search chose,
    /// scored on the whole image), which the search starts from.
    func bracketed(_ reference: PerceptualReference, encoding: EncodingSettings, level: AutoQuality, graphic: Bool,
                   budget: Int, beat: Int?, range: ClosedRange<Int>? = nil, plateau: Bool = false,
                   known: [(QualitySearch.Trial, [UInt8])] = []) throws(DeriveError) -> Outcome {
        var search = QualitySearch(format: encoding.format, level: level, complexity: reference.complexity, graphic: graphic,
                                   maxEncodes: budget, margin: reference.margin(for: encoding.format),
                                   range: range, hint: hints[encoding.format], probing: encoding.format == .jpeg)
        var encoded: [Int: [UInt8]] = [:]
        for (trial, data) in known {
            search.record(trial)
            encoded[trial.quality] = data
        }
        while true {
            let qualities = search.next(count: width)
            if qualities.isEmpty { break }
            for (trial, data) in try trials(qualities, reference: reference, encoding: encoding) {
                search.record(trial)
                encoded[trial.quality] = data
            }
            let missed = search.trials.filter { $0.score < search.target }
            if let beat, let larger = missed.filter({ $0.bytes >= beat }).min(by: { $0.bytes < $1.bytes }) {
                return Outcome(format: encoding.format, quality: larger.quality, score: larger.score, sampleBytes: larger.bytes,
                               data: nil, encodes: search.trials.count, lossless: false, reached: false, outclassed: true)
            }
            if plateau, search.passing == nil, let high = missed.max(by: { $0.quality < $1.quality }),
               missed.contains(where: { high.quality - $0.quality >= Self.plateauSteps && high.score - $0.score < 1 }) {
                return Self.unreached(high, search: search)
            }
        }
        if plateau, search.passing == nil, let high = search.failing {
            // Nothing in a 4:2:0 range met the target: whole chroma is searched next, and the
            // top of this range, which the search judged out of reach, is not measured.
            return Self.unreached(high, search: search)
        }
        var encodes = search.trials.count
        var quality = search.chosen
        var data = encoded[quality]
        var trial = search.trials.first { $0.quality == quality }
        var estimated = search.interpolated
        if let guess = estimated, reference.isFull {
            // Searched whole, the interpolated quality's encode is the output itself: scored
            // too, it is kept only if it meets the target, else the bracket's passing end is.
            let (measured, bytes) = try self.trial(guess.quality, reference: reference, encoding: encoding)
            encodes += 1
            estimated = nil
            if measured.score >= search.target {
                (trial, data) = (measured, bytes)
            } else if let passing = search.passing {
                (quality, trial, data) = (passing.quality, passing, encoded[passing.quality])
            }
        } else if let estimated {
            // Between two measured qualities on the sample: the encode of the whole image is
            // the only one.
            trial = estimated
            data = nil
        } else if trial == nil {
            // Nothing met the target within the budget: the top of the range, measured too.
            let top = try writeSample(reference, encoding: encoding, quality: quality)
            trial = .init(quality: quality, score: try reference.score(top, format: encoding.format), bytes: top.count)
            data = top
            encodes += 1
        }
        let bracket = estimated == nil ? nil : search.failing.flatMap { low in search.passing.map { (low, $0) } }
        return Outcome(format: encoding.format, quality: quality, score: trial?.score, sampleBytes: trial?.bytes ?? 0,
                       data: reference.isFull ? data : nil, encodes: encodes, lossless: false,
                       reached: (trial?.score ?? 0) >= search.target, interpolatedFrom: bracket)
    }

    /// A 4:2:0 search that gave up: its best failing trial, for the whole-chroma search to beat.
    static func unreached(_ high: QualitySearch.Trial, search: QualitySearch) -> Outcome {
        Outcome(format: search.format, quality: high.quality, score: high.score, sampleBytes: high.bytes,
                data: nil, encodes: search.trials.count, lossless: false, reached: false)
    }

    /// Encodes and scores the sample at each quality; several at once, one thread each
    /// (`concurrentPerform` returns when all are done).
    func trials(_ qualities: [Int], reference: PerceptualReference,
                encoding: EncodingSettings) throws(DeriveError) -> [(QualitySearch.Trial, [UInt8])] {
        if qualities.count == 1 { return [try trial(qualities[0], reference: reference, encoding: encoding)] }
        let shared = SharedReference(reference: reference)
        let results = Mutex([Result<(QualitySearch.Trial, [UInt8]), DeriveError>?](repeating: nil, count: qualities.count))
        DispatchQueue.concurrentPerform(iterations: qualities.count) { index in
            let result: Result<(QualitySearch.Trial, [UInt8]), DeriveError>
            do throws(DeriveError) {
                result = .success(try trial(qualities[index], reference: shared.reference, encoding: encoding))
            } catch {
                result = .failure(error)
            }
            results.withLock { $0[index] = result }
        }
        return try results.withLock { $0 }.map { (result) throws(DeriveError) in try result!.get() }
    }

    /// One candidate: the sample encoded at `quality`, decoded and scored.
    func trial(_ quality: Int, reference: PerceptualReference,
               encoding: EncodingSettings) throws(DeriveError) -> (QualitySearch.Trial, [UInt8]) {
        let data = try writeSample(reference, encoding: encoding, quality: quality)
        return (.init(quality: quality, score: try reference.score(data, format: encoding.format), bytes: data.count), data)
    }

    /// The reference handed to the threads of one round. They only read it: libvips images do
    /// not change once built and may be read from several threads at once, and the metric's
    /// side of it is a value; the round ends before the search goes on.
    struct SharedReference: @unchecked Sendable {
        let reference: PerceptualReference
    }

    func losslessOutcome(_ reference: PerceptualReference, encoding: EncodingSettings) throws(DeriveError) -> Outcome {
        var settings = encoding
        settings.lossless = encoding.format != .png
        var choices: [String] = []
        let data = try VipsEncoder.write(reference.sample, settings: settings, quality: encoding.format == .png ? 100 : nil,
                                         effort: effort(settings), choices: &choices)
        return Outcome(format: encoding.format, quality: nil, score: 100, sampleBytes: data.count,
                       data: reference.isFull ? data : nil, encodes: 1, lossless: true, reached: true)
    }

    func writeSample(_ reference: PerceptualReference, encoding: EncodingSettings, quality: Int) throws(DeriveError) -> [UInt8] {
        if directJPEGSamples && encoding.format == .jpeg && !reference.isFull,
           let data = reference.directJPEG(quality: quality, encoding: encoding) {
            return data
        }
        var choices: [String] = []
        return try VipsEncoder.write(reference.sample, settings: encoding, quality: quality,
                                     effort: effort(encoding), choices: &choices)
    }

    /// The output itself: the search's own encoding when it ran on the whole image, otherwise
    /// one more encode of the whole at the quality found, which is then scored on the whole
    /// image before it is kept (`verified`).
    func finish(_ outcome: Outcome, reference: PerceptualReference, encoding: EncodingSettings, level: AutoQuality,
                extra: [String]) throws(DeriveError) -> VipsEncoder.Encoded {
        var settings = encoding
        settings.format = outcome.format
        settings.lossless = outcome.lossless && outcome.format != .png
        settings.chromaSubsampling = outcome.chroma == .full ? .full : encoding.chromaSubsampling
        var choices = extra
        var data = outcome.data
        var encodes = outcome.encodes
        var whole: PerceptualReference?
        if data == nil {
            let quality = outcome.lossless ? (outcome.format == .png ? 100 : nil) : outcome.quality
            if outcome.lossless || reference.isFull {
                data = try VipsEncoder.write(reference.full, settings: settings, quality: quality, effort: effort(settings), choices: &choices)
            } else {
                (data, whole) = try wholeOutput(reference, settings: settings, quality: quality, choices: &choices)
            }
            encodes += 1
        }
        let scope = reference.isFull ? ""
            : " on a sample of \(reference.tiles) \(PerceptualReference.Sampling.tileSide)×\(PerceptualReference.Sampling.tileSide) tiles (searched at +\(Self.decimal(reference.margin(for: outcome.format))))"
        let target = QualitySearch.target(level, for: outcome.format)
        var summary: String?
        if outcome.lossless {
            choices.append("quality auto:\(level.rawValue) → lossless \(outcome.format.rawValue): smaller than lossy at "
                           + "SSIMULACRA 2 target \(Self.decimal(target))\(scope) (\(reference.colours) colours)")
        } else if let quality = outcome.quality, let score = outcome.score {
            var verdict = outcome.reached ? "reached" : "target not reached within \(self.settings.qualityMaxEncodes) encodes; reached"
            if let (low, high) = outcome.interpolatedFrom {
                verdict = "estimated \(Self.decimal(score)) between q\(low.quality) (\(Self.decimal(low.score))) "
                    + "and q\(high.quality) (\(Self.decimal(high.score)))"
            } else {
                verdict += " \(Self.decimal(score))"
            }
            let chroma = outcome.chroma == .full ? " without chroma subsampling" : ""
            let start = hints[outcome.format].map { "; started at q\($0), a wider breakpoint's" } ?? ""
            summary = "\(verdict)\(scope)"
            choices.append("quality auto:\(level.rawValue) → \(quality)\(chroma): SSIMULACRA 2 target \(Self.decimal(target)), "
                           + "\(verdict)\(scope); \(encodes) encodes\(start)")
        }
        if let note = VipsEncoder.effortNote(self.settings.effort(for: settings, format: outcome.format), format: outcome.format) {
            choices.append(note)
        }
        var result = VipsEncoder.Encoded(data: data ?? [], format: outcome.format, quality: outcome.lossless ? nil : outcome.quality,
                                         choices: choices, score: outcome.score, encodes: encodes)
        if let whole, let quality = outcome.quality, let summary {
            result = try verified(result, quality: quality, whole: whole, settings: settings, level: level, sampled: summary)
        }
        return result
    }

    /// How far below its target an output chosen on a sample may score on the whole image and
    /// still be kept: about the metric's own noise between two encoders' decodes of one file.
    static let verificationSlack = 0.5

    /// The output encoded from the whole image and, at the same time where the slot has two
    /// threads, the whole image prepared as the metric's reference for scoring it.
    func wholeOutput(_ reference: PerceptualReference, settings: EncodingSettings, quality: Int?,
                     choices: inout [String]) throws(DeriveError) -> ([UInt8], PerceptualReference) {
        guard width > 1 else {
            let data = try VipsEncoder.write(reference.full, settings: settings, quality: quality, effort: effort(settings), choices: &choices)
            return (data, try reference.whole())
        }
        let shared = SharedReference(reference: reference)
        let output = Mutex<Result<([UInt8], [String]), DeriveError>?>(nil)
        let prepared = Mutex<Result<SharedReference, DeriveError>?>(nil)
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            do throws(DeriveError) {
                if part == 0 {
                    var notes: [String] = []
                    let data = try VipsEncoder.write(shared.reference.full, settings: settings, quality: quality,
                                                     effort: effort(settings), choices: &notes)
                    output.withLock { $0 = .success((data, notes)) }
                } else {
                    // On two threads itself: a JPEG encode is done long before it.
                    let whole = try shared.reference.whole(threads: 2)
                    prepared.withLock { $0 = .success(SharedReference(reference: whole)) }
                }
            } catch {
                if part == 0 { output.withLock { $0 = .failure(error) } } else { prepared.withLock { $0 = .failure(error) } }
            }
        }
        let (data, notes) = try output.withLock { $0 }!.get()
        choices += notes
        return (data, try prepared.withLock { $0 }!.get().reference)
    }

    /// A choice made on the sample, scored on the whole image: kept when it is within
    /// `verificationSlack` of the target, else searched again on the whole image from there
    /// (the encode just scored is its first trial). Either way the choices say what happened
    /// and the score kept is the whole image's.
    func verified(_ chosen: VipsEncoder.Encoded, quality: Int, whole: PerceptualReference, settings: EncodingSettings,
                  level: AutoQuality, sampled: String) throws(DeriveError) -> VipsEncoder.Encoded {
        var result = chosen
        let measured = try whole.score(chosen.data, format: chosen.format, threads: width)
        let target = QualitySearch.target(level, for: chosen.format)
        let size = "\(whole.full.width)×\(whole.full.height)"
        result.verification = .init(score: measured, searchedAgain: false)
        result.score = measured
        if measured >= target - Self.verificationSlack {
            result.choices.append("verified on the whole image (\(size)): SSIMULACRA 2 \(Self.decimal(measured))")
            return result
        }
        var again = self
        again.hints[chosen.format] = nil
        let known = (QualitySearch.Trial(quality: quality, score: measured, bytes: chosen.data.count), chosen.data)
        let whole = whole.searchable(threads: width)
        let outcome = try again.bracketed(whole, encoding: settings, level: level, graphic: whole.colours <= Self.graphicColours,
                                          budget: self.settings.qualityMaxEncodes, beat: nil, known: [known])
        var choices = result.choices.filter { !$0.hasPrefix("quality auto:") }
        let reached = outcome.reached ? "reached" : "target not reached within \(self.settings.qualityMaxEncodes) more encodes; reached"
        let chroma = settings.chromaSubsampling == .full ? " without chroma subsampling" : ""
        let more = outcome.encodes - 1
        choices.append("quality auto:\(level.rawValue) → \(outcome.quality ?? quality)\(chroma): SSIMULACRA 2 target \(Self.decimal(target)), "
                       + "\(reached) \(Self.decimal(outcome.score ?? measured)) on the whole image (\(size)), searched again on the whole image; "
                       + "\(chosen.encodes + more) encodes")
        choices.append("the sample's choice missed on the whole image: q\(quality) (\(sampled)) scored \(Self.decimal(measured)) "
                       + "on the whole image, more than \(Self.decimal(Self.verificationSlack)) below the target; \(more) encodes searching again")
        result.choices = choices
        result.data = outcome.data ?? chosen.data
        result.quality = outcome.quality ?? quality
        result.score = outcome.score
        result.encodes = chosen.encodes + more
        result.verification = .init(score: outcome.score ?? measured, searchedAgain: true)
        return result
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
        if let note = VipsEncoder.effortNote(settings.effort(for: encoding, format: encoding.format), format: encoding.format) {
            choices.append(note)
        }
        let data = try VipsEncoder.write(image, settings: encoding, quality: quality, effort: effort(encoding), choices: &choices)
        return VipsEncoder.Encoded(data: data, format: encoding.format, quality: encoding.lossless ? nil : quality,
                                   choices: choices, score: nil, encodes: 1)
    }

    /// The effort the output itself is encoded at (`EngineSettings.effort(for:format:)`).
    func effort(_ encoding: EncodingSettings) -> Int {
        settings.effort(for: encoding, format: encoding.format).effort
    }

    static func kilobytes(_ bytes: Int) -> String { "\(decimal(Double(bytes) / 1000)) kB" }

    static func decimal(_ value: Double) -> String { String(format: "%.1f", value) }
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
