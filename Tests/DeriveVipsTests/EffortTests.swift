import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Testing

/// Encoder effort (issue 40): an output's JSON `effort` is honoured, else the deployment's
/// (`DERIVE_<FORMAT>_EFFORT`), else Derive's default; the choices say which.
@Suite struct EffortTests {
    static func render(_ settings: String, engine: EngineSettings = Harness.allLoaders) throws -> RenderedOutput {
        let job = #"{"outputs": [{"name": "a", "chain": "c_scale,w_256", "#+settings+"}]}"
        return try #require(try Harness.render("photos/grace_hopper_noexif.jpg", job, engine: try Harness.engine(engine)).1.outputs.first)
    }

    @Test(arguments: [OutputFormat.avif, .webp, .jxl])
    func anExplicitEffortIsHonoured(format: OutputFormat) throws {
        let fastest = format == .jxl ? 1 : 0
        let fast = try Self.render(#""format": "\#(format.rawValue)", "quality": 60, "effort": \#(fastest)"#)
        let slow = try Self.render(#""format": "\#(format.rawValue)", "quality": 60, "effort": 8"#)
        #expect(fast.metadata.choices.contains("effort \(fastest) (the output's effort)"), "\(fast.metadata.choices)")
        #expect(slow.metadata.choices.contains("effort 8 (the output's effort)"), "\(slow.metadata.choices)")
        #expect(fast.data != slow.data)
        // The deployment's effort applies to outputs that give none, and is the same encode as
        // asking for it in the output.
        var deployment = Harness.allLoaders
        deployment.efforts[format] = fastest
        let deployed = try Self.render(#""format": "\#(format.rawValue)", "quality": 60"#, engine: deployment)
        #expect(deployed.metadata.choices.contains("effort \(fastest) (DERIVE_\(format.rawValue.uppercased())_EFFORT)"),
                "\(deployed.metadata.choices)")
        #expect(deployed.data == fast.data)
        let standard = try Self.render(#""format": "\#(format.rawValue)", "quality": 60"#)
        let effort = EngineSettings.defaultEfforts[format] ?? format.canonicalEffort
        #expect(standard.metadata.choices.contains("effort \(effort) (\(format.rawValue)'s default)"), "\(standard.metadata.choices)")
    }

    /// q_auto's output says its effort too, and an explicit one holds for the output itself.
    @Test func qAutoSaysItsEffort() throws {
        let output = try Self.render(#""format": "avif", "quality": "auto", "effort": 1"#)
        #expect(output.metadata.choices.contains("effort 1 (the output's effort)"), "\(output.metadata.choices)")
    }

    /// An output without `effort` keeps the canonical form (and identity) it always had: the
    /// former default is written, whatever the deployment's effort.
    @Test func theCanonicalFormIsUnchanged() throws {
        let output = try #require(try Harness.outputs(#"{"chain": [], "format": "avif"}"#).first)
        #expect(output.identityText.contains(#""effort":4"#))
        #expect(output.identityText == (try #require(try Harness.outputs(#"{"chain": [], "format": "avif", "effort": 4}"#).first)).identityText)
    }
}
