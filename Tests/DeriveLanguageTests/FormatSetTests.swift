@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// Format sets (`"formats": [...]`): one output per format, each exactly the output written
/// with that single format, so existing identities and keys do not move.
@Suite struct FormatSetTests {
    static func resolve(_ json: String) throws -> [CanonicalOutput] {
        try JobResolver().resolve(TransformationInput.parse(json)).outputs
    }

    @Test func aFormatSetResolvesToOneOutputPerFormat() throws {
        let set = try Self.resolve(#"{"outputs": [{"name": "card", "chain": "c_fill,w_300,h_200", "formats": ["avif", "webp", "jpg"], "quality": "auto:eco"}]}"#)
        #expect(set.map(\.name) == ["card", "card", "card"])
        #expect(set.map(\.encoding.format) == [.avif, .webp, .jpeg])
        for output in set {
            let single = try Self.resolve(#"{"outputs": [{"name": "card", "chain": "c_fill,w_300,h_200", "format": "\#(output.encoding.format.rawValue)", "quality": "auto:eco"}]}"#)
            #expect(single.first?.identity == output.identity)
            #expect(!output.identityText.contains("formats"))
        }
        #expect(Set(set.map(\.identity)).count == 3)
    }

    @Test(arguments: [
        (#"{"outputs": [{"name": "a", "chain": [], "formats": ["webp"], "format": "png"}]}"#, "cannot be combined with a format"),
        (#"{"outputs": [{"name": "a", "chain": "f_png", "formats": ["webp"]}]}"#, "cannot be combined with a format"),
        (#"{"outputs": [{"name": "a", "chain": [], "formats": ["webp", "webp"]}]}"#, "listed twice"),
        (#"{"outputs": [{"name": "a", "chain": [], "formats": ["auto"]}]}"#, "concrete formats"),
        (#"{"outputs": [{"name": "a", "chain": [], "formats": ["wepb"]}]}"#, "unknown format"),
        (#"{"outputs": [{"name": "a", "chain": [], "formats": []}]}"#, "lists no formats"),
    ])
    func badFormatSetsAreRefusedWithTheirPath(json: String, message: String) {
        #expect { try Self.resolve(json) } throws: { error in
            "\(error)".contains("formats") && "\(error)".contains(message)
        }
    }
}
