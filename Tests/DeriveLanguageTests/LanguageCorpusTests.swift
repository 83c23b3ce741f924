@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// How much of the Cloudinary language Derive reads, measured on public strings: the corpus
/// `Benchmarks/language/corpus.py` writes (the image transformation strings of pinned PyPI
/// source distributions' tests and docs, and the hand-written documentation and issue examples
/// beside it), whose path `Scripts/test.sh` and `Benchmarks/language.sh` pass in
/// `DERIVE_LANGUAGE_CORPUS`; 2,363 strings, most from the tests of 21 Cloudinary SDK repositories,
/// split by a fixed rule into a tune part and a held-out report part. Each string goes through what `derive explain` does — parse,
/// resolve, plan — and is accepted, refused with a clear reason, or refused with an unclear
/// one. Features that need generative AI or a third-party add-on are counted apart: Derive will
/// not have them. The figures only move up; `bash Benchmarks/language.sh` prints them with the
/// reasons behind every refusal.
@Suite(.enabled(if: CorpusMeasurement.corpus != nil, "needs DERIVE_LANGUAGE_CORPUS, the corpus Scripts/test.sh builds with Benchmarks/language/corpus.py"))
struct LanguageCorpusTests {
    /// The figures at the last measurement (Benchmarks/RESULTS.md). Raise them as the language
    /// grows; the test fails if fewer strings are accepted or more are refused unclearly.
    static let acceptedAtLeast = (tune: 1266, report: 605)
    static let unclearAtMost = 0
    /// Accepted, or refused where Cloudinary refuses too (`Benchmarks/language/cloudinary-refuses.tsv`,
    /// each string with its evidence): a figure reported apart from the accepted share.
    static let agreedAtLeast = (tune: 1304, report: 622)
    static let corpusSize = 2363

    @Test func theAcceptedShareOnlyGrowsAndNoMessageGetsLessClear() throws {
        let measurement = try CorpusMeasurement.run(corpus: try #require(CorpusMeasurement.corpus))
        if let path = ProcessInfo.processInfo.environment["DERIVE_CORPUS_REPORT"] {
            try measurement.report.write(toFile: path, atomically: true, encoding: .utf8)
        }
        if let path = ProcessInfo.processInfo.environment["DERIVE_CORPUS_OUTCOMES"] {
            try measurement.outcomes.write(toFile: path, atomically: true, encoding: .utf8)
        }
        #expect(measurement.results.count == Self.corpusSize, "the corpus changed: update corpusSize and RESULTS.md")
        #expect(measurement.count(.accepted, in: "tune") >= Self.acceptedAtLeast.tune, "\(measurement.summary)")
        #expect(measurement.count(.accepted, in: "report") >= Self.acceptedAtLeast.report, "\(measurement.summary)")
        #expect(measurement.count(.refusedUnclear) <= Self.unclearAtMost, "\(measurement.summary)")
        #expect(measurement.agreed(in: "tune") >= Self.agreedAtLeast.tune, "\(measurement.summary)")
        #expect(measurement.agreed(in: "report") >= Self.agreedAtLeast.report, "\(measurement.summary)")
    }

    /// Every string labelled "Cloudinary refuses too" is in the corpus (a label for a string
    /// that left it would count nothing and hide that it left), and each has its evidence.
    @Test func everyLabelNamesACorpusStringWithEvidence() throws {
        let measurement = try CorpusMeasurement.run(corpus: try #require(CorpusMeasurement.corpus))
        let strings = Set(measurement.results.map(\.string))
        for (string, evidence) in CorpusMeasurement.cloudinaryRefuses {
            #expect(strings.contains(string), "\(string) is labelled but not in the corpus")
            #expect(evidence.count > 40, "\(string): the evidence is a sentence with where it comes from")
        }
    }
}

/// One corpus string's fate.
enum CorpusOutcome: Hashable {
    case accepted
    /// The first line names the parameter and says whether Cloudinary has it.
    case refusedClear
    case refusedUnclear
    /// Needs generative AI, an add-on or a detector Derive will not have (the category).
    case excluded(String)
}

struct CorpusMeasurement {
    struct Result {
        var string: String
        var source: String
        var outcome: CorpusOutcome
        /// `tune` or `report` (held out), by corpus.py's fixed rule on the string's SHA-256.
        var part: String
        /// The first line of the refusal, if refused.
        var firstLine: String?
    }

    var results: [Result]

    /// The corpus strings Cloudinary refuses too, with the evidence for each
    /// (`Benchmarks/language/cloudinary-refuses.tsv`).
    static let cloudinaryRefuses: [String: String] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Benchmarks/language/cloudinary-refuses.tsv")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [:] }
        var labels: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t", maxSplits: 1).map(String.init)
            if fields.count == 2 { labels[fields[0]] = fields[1] }
        }
        return labels
    }()

    /// Refused by Derive where Cloudinary refuses too, in one part or all.
    func refusedAsCloudinary(in part: String? = nil) -> Int {
        results(in: part).filter { ($0.outcome == .refusedClear || $0.outcome == .refusedUnclear) && Self.cloudinaryRefuses[$0.string] != nil }.count
    }

    /// Accepted, or refused where Cloudinary refuses too.
    func agreed(in part: String? = nil) -> Int { count(.accepted, in: part) + refusedAsCloudinary(in: part) }

    /// Labelled as refused by Cloudinary, yet accepted by Derive (Derive is more lenient there).
    func acceptedThoughLabelled(in part: String? = nil) -> Int {
        results(in: part).filter { $0.outcome == .accepted && Self.cloudinaryRefuses[$0.string] != nil }.count
    }

    /// The corpus file (`string<TAB>source<TAB>part` after a header line), from `DERIVE_LANGUAGE_CORPUS`.
    static let corpus: URL? = ProcessInfo.processInfo.environment["DERIVE_LANGUAGE_CORPUS"].flatMap {
        $0.isEmpty ? nil : URL(fileURLWithPath: $0)
    }

    /// The source every string is planned for: a 4000x3000 ten-page TIFF, so page selections
    /// (`pg_3`) exist.
    static let source = SourceFacts(format: .tiff, width: 4000, height: 3000, pages: 10)

    static func run(corpus: URL) throws -> CorpusMeasurement {
        let text = try String(contentsOf: corpus, encoding: .utf8)
        let rows = text.split(separator: "\n").dropFirst().map { $0.split(separator: "\t", maxSplits: 1).map(String.init) }
        return CorpusMeasurement(results: rows.map { row in
            let string = row[0]
            let rest = row.count > 1 ? row[1].split(separator: "\t").map(String.init) : []
            let source = rest.first ?? ""
            let part = rest.count > 1 ? rest[1] : "tune"
            if let category = excludedCategory(string) {
                return Result(string: string, source: source, outcome: .excluded(category), part: part)
            }
            guard let refusal = explain(string) else { return Result(string: string, source: source, outcome: .accepted, part: part) }
            return Result(string: string, source: source, outcome: isClear(refusal.reason) ? .refusedClear : .refusedUnclear,
                          part: part, firstLine: refusal.description)
        })
    }

    /// Parse, resolve and plan as `derive explain` does; the first issue when refused. Named
    /// transformations (`t_name`) live in the user's account, so every name resolves to an
    /// empty preset: the string is judged, not the presets it names.
    static func explain(_ string: String) -> ValidationIssue? {
        do {
            let job = try TransformationInput.parse(string)
            let resolved = try JobResolver(catalog: AnyNamedPreset()).resolve(job)
            _ = try Planner().plan(resolved, source: source)
            return nil
        } catch let error as ValidationError {
            return error.issues.first ?? ValidationIssue(location: "", reason: "(no issue)")
        } catch {
            return ValidationIssue(location: "", reason: "unexpected error \(error)")
        }
    }

    /// Names the parameter and says whether Cloudinary has it, as the issue asks of every refusal.
    static func isClear(_ reason: String) -> Bool {
        reason.contains(": known to Cloudinary, not supported by Derive") || reason.contains(": unknown to Cloudinary (")
            || reason.contains(": out of Cloudinary's range (")
    }

    /// The excluded categories of issue 15: generative AI, background removal, style transfer,
    /// Imagga, object and OCR gravities, and the other add-ons.
    static func excludedCategory(_ string: String) -> String? {
        for component in string.split(separator: "/") {
            for token in component.split(separator: ",") {
                let parts = token.split(separator: "_", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                let (key, value) = (parts[0], parts[1])
                if key == "g" || (key == "e" && value.contains(":g_")), Gravity.parseToken(value) == nil, Gravity.isDetectorGravity(value) {
                    return "object and OCR gravities"
                }
                if key == "q" && value.hasPrefix("jpegmini") { return "other add-ons" }
                guard let feature = CloudinaryVocabulary.unsupported(key: key, value: value) else { continue }
                if feature.reason == CloudinaryVocabulary.generative { return "generative AI" }
                guard feature.reason == CloudinaryVocabulary.addOn else { continue }
                if key == "c" { return "Imagga" }
                if value.hasPrefix("style_transfer") { return "style transfer" }
                if ["background_removal", "bgremoval", "remove_background"].contains(where: value.hasPrefix) { return "background removal" }
                return "other add-ons"
            }
        }
        return nil
    }

    /// The results of one part (`tune`, `report`), or all of them.
    func results(in part: String?) -> [Result] { part.map { p in results.filter { $0.part == p } } ?? results }

    func count(_ outcome: CorpusOutcome, in part: String? = nil) -> Int { results(in: part).filter { $0.outcome == outcome }.count }

    var excluded: [String: Int] {
        var counts: [String: Int] = [:]
        for r in results { if case .excluded(let category) = r.outcome { counts[category, default: 0] += 1 } }
        return counts
    }

    /// The strings counted (all but the excluded) in one part, or in all.
    func measured(in part: String? = nil) -> Int {
        results(in: part).filter { if case .excluded = $0.outcome { false } else { true } }.count
    }

    static func percent(_ part: Int, of whole: Int) -> String {
        whole == 0 ? "-" : String(format: "%.1f%%", Double(part) * 100 / Double(whole))
    }

    var summary: String {
        ["tune", "report"].map { part in
            let m = measured(in: part)
            return "\(part): accepted \(count(.accepted, in: part)) (\(Self.percent(count(.accepted, in: part), of: m))), "
                + "refused clearly \(count(.refusedClear, in: part)), refused unclearly \(count(.refusedUnclear, in: part)) of \(m), "
                + "accepted or refused as Cloudinary refuses \(agreed(in: part))"
        }.joined(separator: "; ") + "; \(results.count - measured()) excluded"
    }

    /// The figures of both parts, by source, then the most frequent refusals of the tune part
    /// (the parameter as written replaced by its key, so one reason counts once), then every
    /// unclear refusal with its source. The report part's refusals are not listed: it is held out.
    var report: String {
        var lines = ["corpus: \(results.count) strings (Benchmarks/language/corpus.py), \(results(in: "tune").count) tune, \(results(in: "report").count) report (held out)"]
        lines.append("")
        lines.append("| outcome | tune (\(measured(in: "tune"))) | report, held out (\(measured(in: "report"))) | all (\(measured())) |")
        lines.append("|---|---:|---:|---:|")
        for (name, outcome) in [("accepted", CorpusOutcome.accepted), ("refused, clear reason", .refusedClear), ("refused, unclear reason", .refusedUnclear)] {
            let cells = ["tune", "report", nil].map { (part: String?) in
                "\(count(outcome, in: part)) (\(Self.percent(count(outcome, in: part), of: measured(in: part))))"
            }
            lines.append("| \(name) | " + cells.joined(separator: " | ") + " |")
        }
        let agreedCells = ["tune", "report", nil].map { (part: String?) in
            "\(agreed(in: part)) (\(Self.percent(agreed(in: part), of: measured(in: part))))"
        }
        lines.append("")
        lines.append("Counted apart: strings Cloudinary refuses too (Benchmarks/language/cloudinary-refuses.tsv, \(Self.cloudinaryRefuses.count) labelled, each with its evidence):")
        lines.append("")
        lines.append("| outcome | tune | report, held out | all |")
        lines.append("|---|---:|---:|---:|")
        lines.append("| refused as Cloudinary refuses | " + ["tune", "report", nil].map { "\(refusedAsCloudinary(in: $0))" }.joined(separator: " | ") + " |")
        lines.append("| accepted, or refused as Cloudinary refuses | " + agreedCells.joined(separator: " | ") + " |")
        lines.append("| labelled, yet accepted | " + ["tune", "report", nil].map { "\(acceptedThoughLabelled(in: $0))" }.joined(separator: " | ") + " |")
        lines.append("")
        lines.append("by source (accepted of measured; excluded apart):")
        var sources: [String: [Result]] = [:]
        for r in results { sources[Self.origin(of: r.source), default: []].append(r) }
        for (origin, rs) in sources.sorted(by: { ($0.value.count, $1.key) > ($1.value.count, $0.key) }) {
            let m = rs.filter { if case .excluded = $0.outcome { false } else { true } }.count
            let a = rs.filter { $0.outcome == .accepted }.count
            lines.append("  \(origin): \(rs.count) strings, \(a) of \(m) accepted (\(Self.percent(a, of: m))), \(rs.count - m) excluded")
        }
        lines.append("")
        lines.append("excluded (not counted above): \(results.count - measured())")
        for (category, n) in excluded.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
            lines.append("  \(category): \(n)")
        }
        lines.append("")
        lines.append("most frequent refusals of the tune part (first line, by what it says):")
        var reasons: [String: Int] = [:]
        for r in results(in: "tune") { if let line = r.firstLine { reasons[Self.shape(of: line), default: 0] += 1 } }
        for (reason, n) in reasons.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }).prefix(60) {
            lines.append(String(format: "%5d  ", n) + reason)
        }
        lines.append("")
        lines.append("unclear refusals:")
        for r in results where r.outcome == .refusedUnclear {
            lines.append("  \(r.string)\t\(r.firstLine ?? "")\t[\(r.source)]")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every string's outcome, one a line (`outcome<TAB>string<TAB>first line of the refusal`), to
    /// compare two measurements with diff.
    var outcomes: String {
        results.map { r in
            let outcome: String
            switch r.outcome {
            case .accepted: outcome = "accepted"
            case .refusedClear: outcome = "clear"
            case .refusedUnclear: outcome = "unclear"
            case .excluded(let category): outcome = "excluded (\(category))"
            }
            return "\(r.part)\t\(outcome)\t\(r.string)\t\(r.firstLine ?? "")\n"
        }.joined()
    }

    /// Where a string comes from, for the report: the sdist, the SDK repository, or the
    /// documentation site.
    static func origin(of source: String) -> String {
        if source.hasPrefix("github.com/"), let repo = source.split(separator: "@").first { return String(repo) }
        if source.hasPrefix("http"), let host = URL(string: source)?.host { return "documentation: \(host)" }
        if let sdist = source.split(separator: ":").first, sdist.hasSuffix(".tar.gz") { return String(sdist) }
        return source
    }

    /// A refusal without its location and with numbers and quoted values blanked, so refusals
    /// for one reason group together.
    static func shape(of line: String) -> String {
        var text = line
        if let range = text.range(of: #"^chain component \d+ \("[^"]*"\): "#, options: .regularExpression) {
            text.removeSubrange(range)
        }
        if let colon = text.range(of: ": known to Cloudinary") ?? text.range(of: ": unknown to Cloudinary") ?? text.range(of: ": out of Cloudinary's range") {
            let written = String(text[..<colon.lowerBound])
            let key = written.hasPrefix("$") ? "$…" : written.split(separator: "_", maxSplits: 1).first.map { String($0) + "_…" } ?? written
            text = key + text[colon.lowerBound...]
        }
        return text.replacingOccurrences(of: #"\"[^"]*\""#, with: "\"…\"", options: .regularExpression)
            .replacingOccurrences(of: #"-?\d+(\.\d+)?"#, with: "N", options: .regularExpression)
    }
}

/// Answers every name with an empty single-output preset.
struct AnyNamedPreset: PresetCatalog {
    func preset(named name: String) throws -> Preset? {
        Preset(name: name, version: 1, outputs: [OutputSpec(name: name, chain: [], settings: OutputSettings())])
    }
}
