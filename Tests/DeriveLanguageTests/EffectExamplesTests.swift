import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// The contact sheet's list (`Docs/effects/examples.tsv`) stays complete: every effect name
/// Derive parses has an example there, and every example parses.
@Suite struct EffectExamplesTests {
    static func examples() throws -> [(label: String, chain: String)] {
        let text = try String(contentsOf: Paths.repository.appendingPathComponent("Docs/effects/examples.tsv"), encoding: .utf8)
        return text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.isEmpty }.map { line in
            let fields = line.split(separator: "\t", maxSplits: 1).map(String.init)
            return (fields[0], fields.count > 1 ? fields[1] : "")
        }
    }

    @Test func everyEffectHasAnExampleAndEveryExampleParses() throws {
        let examples = try Self.examples()
        let named = Set(examples.flatMap { example in
            example.chain.split(separator: "/").flatMap { $0.split(separator: ",") }.compactMap { component -> String? in
                guard component.hasPrefix("e_") else { return nil }
                return String(component.dropFirst(2).prefix { $0 != ":" })
            }
        })
        let missing = StepCatalogue.effectNames.filter { !named.contains($0) }
        #expect(missing.isEmpty, "effects without an example in Docs/effects/examples.tsv: \(missing)")
        for example in examples {
            let parsed = CloudinaryParser().parse(example.chain)
            #expect(parsed.issues.isEmpty, "\(example.label): \(example.chain): \(parsed.issues.map(\.reason))")
        }
    }
}
