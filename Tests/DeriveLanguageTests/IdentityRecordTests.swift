@testable import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// The identity record (issue 41): what every corpus string and 100,000 generated chains meant
/// before the step catalogue, held as data so that no rewrite of the parsers, printers or
/// encoders changes an output's identity (the hash its storage key is made of).
///
/// `Tests/DeriveLanguageTests/IdentityRecord/` holds, xz-compressed:
/// - `corpus.tsv.xz`: every string of the language corpus (the pinned sdists' strings, the
///   hand-written TSVs, Cloudinary's refusals, the fuzz seeds), with the identities of its
///   outputs, its canonical string and its refusal, if any (`-` for none).
/// - `chains-strings.tsv.xz` (75,000) and `chains-json.tsv.xz` (25,000): generated chains
///   (ChainGenerator, seeds 41 and 4141, those of at most 150 and 250 characters, so that the
///   record stays small), frozen as inputs (a canonical string, or an output's JSON), each with
///   the first 4 hex digits of its identity, enough to name the first that changed;
///   `chains.sha256` a SHA-256 per 1,000 chains of their full identities and canonical JSON.
///
/// The record is written once, by `DERIVE_WRITE_IDENTITY_RECORD=1 swift test --filter
/// IdentityRecordTests` (with `DERIVE_LANGUAGE_CORPUS` set); it is never rewritten to make
/// this suite pass, except for a refusal reworded to say more.
@Suite struct IdentityRecordTests {
    static let folder = Paths.repository.appendingPathComponent("Tests/DeriveLanguageTests/IdentityRecord")
    static let chunk = 1000

    /// A corpus string's meaning: outputs' identities, canonical strings, refusal.
    struct Meaning: Equatable {
        var identities: String
        var printed: String
        var refusal: String

        var line: String { [identities, printed, refusal].joined(separator: "\t") }
    }

    static func meaning(of string: String) -> Meaning {
        var identities = "-", printed = "-", refusal = "-"
        do {
            let job = try TransformationInput.parse(string)
            let resolved = try JobResolver(catalog: AnyNamedPreset()).resolve(job)
            identities = resolved.outputs.map(\.identity).joined(separator: ",")
            printed = resolved.outputs.map { (try? CloudinaryPrinter.string(for: $0)) ?? "(unprintable)" }.joined(separator: " | ")
            _ = try Planner().plan(resolved, source: CorpusMeasurement.source)
        } catch let error as ValidationError {
            refusal = error.issues.map(\.description).joined(separator: " ¦ ")
        } catch {
            refusal = "unexpected error \(error)"
        }
        return Meaning(identities: identities, printed: printed, refusal: refusal)
    }

    /// Whether a string means now what the record says: the same identities and canonical
    /// strings, and the same refusal. Two changes keep it: a refused string that a new effect
    /// now reads (its identities, if it had any, unchanged), and a refusal whose list of the
    /// effects Derive supports grew.
    static func keeps(_ recorded: Meaning, _ now: Meaning) -> Bool {
        if recorded == now { return true }
        if recorded.refusal != "-", now.refusal == "-", recorded.identities == "-" || recorded.identities == now.identities { return true }
        return recorded.identities == now.identities && recorded.printed == now.printed
            && withoutSupportedList(recorded.refusal) == withoutSupportedList(now.refusal)
    }

    static func withoutSupportedList(_ text: String) -> String {
        text.replacingOccurrences(of: #"supported: [a-z_, ]+"#, with: "supported: …", options: .regularExpression)
    }

    /// One generated chain's identity and the SHA-256 of its canonical JSON (name included).
    static func record(chain input: String) throws -> String {
        let model = input.hasPrefix("{") ? try canonical(json: input) : try canonical(string: input)
        return model.identity + " " + SHA256.hex(JSONWriter.canonical(model.json))
    }

    static let writing = ProcessInfo.processInfo.environment["DERIVE_WRITE_IDENTITY_RECORD"] == "1"

    /// With `DERIVE_WRITE_IDENTITY_RECORD=1`, the record is written once, before any test of the
    /// suite reads it (a static let runs once); the tests then check the record just written.
    /// A writer that is a test of its own would be a skipped test in every other run.
    static let prepared: Result<Void, any Error> = Result { if writing { try write() } }

    @Test func corpusStringsKeepTheirMeaning() throws {
        try Self.prepared.get()
        let rows = try Self.lines(of: "corpus.tsv.xz").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        #expect(rows.count >= 2381)
        var differing: [String] = []
        for row in rows {
            let expected = Meaning(identities: row[1], printed: row[2], refusal: row[3])
            let now = Self.meaning(of: row[0])
            if !Self.keeps(expected, now) { differing.append("\(row[0])\n  recorded: \(expected.line)\n  now:      \(now.line)") }
        }
        #expect(differing.isEmpty, "\(differing.count) corpus strings changed meaning:\n\(differing.prefix(20).joined(separator: "\n"))")
    }

    @Test(arguments: ["strings", "json"])
    func generatedChainsKeepTheirIdentity(_ kind: String) throws {
        try Self.prepared.get()
        let rows = try Self.lines(of: "chains-\(kind).tsv.xz").map { $0.split(separator: "\t", maxSplits: 1).map(String.init) }
        let digests = try Self.digests()[kind] ?? []
        #expect(rows.count == digests.count * Self.chunk)
        #expect(rows.count >= 25_000)
        for (index, digest) in digests.enumerated() {
            let chunk = rows[index * Self.chunk ..< (index + 1) * Self.chunk]
            var records: [String] = []
            var firstDiffering: String?
            for row in chunk {
                let record = try Self.record(chain: row[1])
                records.append(record)
                if firstDiffering == nil, !record.hasPrefix(row[0]) { firstDiffering = "\(row[1]) (recorded \(row[0]), now \(record))" }
                // A canonical string prints back to itself.
                if kind == "strings" {
                    let printed = try CloudinaryPrinter.string(for: canonical(string: row[1]))
                    #expect(printed == row[1], "printed \(printed)")
                }
            }
            let now = SHA256.hex(records.joined(separator: "\n"))
            #expect(now == digest, "\(kind) chunk \(index) (chains \(index * Self.chunk)..<\((index + 1) * Self.chunk)) changed; first: \(firstDiffering ?? "(a JSON hash)")")
        }
    }

    // MARK: The record's files

    static func lines(of name: String) throws -> [String] {
        let url = folder.appendingPathComponent(name)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xz", "-dc", url.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "xz -dc \(url.path)")
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// `kind index sha256` lines.
    static func digests() throws -> [String: [String]] {
        let text = try String(contentsOf: folder.appendingPathComponent("chains.sha256"), encoding: .utf8)
        var found: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let words = line.split(separator: " ").map(String.init)
            found[words[0], default: []].append(words[2])
        }
        return found
    }

    static func writeCompressed(_ lines: [String], to name: String) throws {
        let plain = folder.appendingPathComponent(name.replacingOccurrences(of: ".xz", with: ""))
        try (lines.joined(separator: "\n") + "\n").write(to: plain, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xz", "-9ef", plain.path]
        try process.run()
        process.waitUntilExit()
    }

    /// Writes the record. Run once, before a change of the language, never to make a test pass.
    static func write() throws {
        try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
        // The corpus: LanguageCorpusTests' strings, Cloudinary's refusals, the fuzz seeds.
        var strings: [String] = []
        let corpus = try String(contentsOf: try #require(CorpusMeasurement.corpus), encoding: .utf8)
        strings += corpus.split(separator: "\n").dropFirst().map { String($0.split(separator: "\t")[0]) }
        for file in ["Benchmarks/language/cloudinary-refuses.tsv", "Tests/Fuzz/seeds/cloudinary.txt"] {
            let text = try String(contentsOf: Paths.repository.appendingPathComponent(file), encoding: .utf8)
            strings += text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { String($0.split(separator: "\t")[0]) }
        }
        var seen = Set<String>()
        strings = strings.filter { !$0.isEmpty && seen.insert($0).inserted }
        try Self.writeCompressed(strings.map { $0 + "\t" + Self.meaning(of: $0).line }, to: "corpus.tsv.xz")

        var digests = ["# kind chunk sha256: per 1,000 chains, SHA-256 of their lines `identity sha256(canonical JSON)`"]
        for (kind, seed, count, longest) in [("strings", UInt64(41), 75_000, 150), ("json", UInt64(4141), 25_000, 250)] {
            var generator = ChainGenerator(random: SeededRandom(seed: seed), jsonOnly: kind == "json")
            var rows: [String] = [], records: [String] = []
            while rows.count < count {
                let output = generator.output()
                let json = JSONWriter.canonical(ChainEncoder.json(output))
                let input = kind == "json" ? json : try CloudinaryPrinter.string(for: canonical(json: json))
                guard !input.isEmpty, input.count <= longest, !input.contains("\n"), !input.contains("\t") else { continue }
                let record = try Self.record(chain: input)
                records.append(record)
                rows.append(String(record.prefix(4)) + "\t" + input)
            }
            try Self.writeCompressed(rows, to: "chains-\(kind).tsv.xz")
            for index in 0..<(count / Self.chunk) {
                digests.append("\(kind) \(index) \(SHA256.hex(records[index * Self.chunk ..< (index + 1) * Self.chunk].joined(separator: "\n")))")
            }
        }
        try (digests.joined(separator: "\n") + "\n").write(to: Self.folder.appendingPathComponent("chains.sha256"), atomically: true, encoding: .utf8)
    }
}
