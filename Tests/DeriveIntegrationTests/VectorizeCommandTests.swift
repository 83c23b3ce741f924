import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// e_vectorize + f_svg as a user runs it: `derive explain` plans an SVG, `derive run` writes one
/// under an .svg name and reports it, and f_svg without e_vectorize fails with the reason.
@Suite struct VectorizeCommandTests {
    static let photo = Paths.fixture("photos/grace_hopper_noexif.jpg").path

    @Test func explainSaysSVG() throws {
        let result = try DeriveBinary.run(["explain", "--chain", "c_scale,w_256/e_vectorize:colors:5:detail:0.5/f_svg", Self.photo])
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let outputs)? = try JSONParser().parse(result.stdout)["outputs"] else {
            Issue.record("no outputs in \(result.stdout)")
            return
        }
        #expect(outputs[0]["format"] == .string("svg"))
        #expect(outputs[0]["transformation"] == .string("c_scale,w_256/e_vectorize:colors:5:detail:0.5/f_svg"))
        guard case .array(let operations)? = outputs[0]["operations"] else {
            Issue.record("no operations in \(result.stdout)")
            return
        }
        #expect(operations.last?["op"] == .string("vectorize"))
    }

    @Test func runWritesAnSVG() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("derive-vectorize-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try DeriveBinary.run(["run", Self.photo, "--chain", "e_vectorize:4/f_svg", "--out", out.path])
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let reports) = try JSONParser().parse(result.stdout), case .array(let outputs)? = reports.first?["outputs"] else {
            Issue.record("no report in \(result.stdout)")
            return
        }
        #expect(outputs[0]["format"] == .string("svg"))
        #expect(outputs[0]["key"] == .string("grace_hopper_noexif/default.svg"))
        let written = try String(contentsOf: out.appendingPathComponent("grace_hopper_noexif/default.svg"), encoding: .utf8)
        #expect(written.hasPrefix("<?xml") && written.contains(#"<svg xmlns="http://www.w3.org/2000/svg""#))
        #expect(written.components(separatedBy: "<path ").count - 1 == 4)
    }

    @Test func svgWithoutVectorizeFails() throws {
        let result = try DeriveBinary.run(["explain", "--chain", "c_scale,w_256/f_svg", Self.photo])
        #expect(result.status != 0)
        #expect(result.stderr.contains("f_svg: known to Cloudinary, not supported by Derive without e_vectorize: Derive writes SVG only by tracing an image with e_vectorize"), "\(result.stderr)")
    }
}
