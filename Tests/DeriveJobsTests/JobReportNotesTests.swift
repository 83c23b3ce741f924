import DeriveJobs
import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// The job report carries the plan's notes beside the output they are about.
@Suite struct JobReportNotesTests {
    static let source = SourceFacts(format: .jpeg, width: 4000, height: 3000)

    @Test func theReportSaysWhatWasLeftOut() throws {
        let planned = try plan(["c_fill,e_grayscale", "e_sepia"], Self.source)
        let inspection = SourceInspection(facts: Self.source, colorSpace: "srgb")
        let source = SourceMetadata(location: "file:///a.jpg", sha256: "", bytes: 1, inspection: inspection, perceptualHash: "0")
        let outputs = planned.outputs.map { o in
            RenderedOutput(name: o.name, breakpointWidth: nil, identity: o.identity, data: [],
                           metadata: OutputMetadata(format: .jpeg, width: 4000, height: 3000, bytes: 1, sha256: "", frames: 1, hasAlpha: false,
                                                    quality: 80, choices: [], blurhash: "", dominantColor: "#000000",
                                                    applyMilliseconds: 0, encodeMilliseconds: 0))
        }
        let report = JobReport(plan: planned, result: RenderResult(source: source, outputs: outputs, timings: StageTimings()),
                               locations: ["a", "b"], timings: StageTimings(), totalMilliseconds: 0)
        guard case .array(let reported)? = report.json["outputs"] else {
            Issue.record("no outputs in \(JSONWriter.pretty(report.json))")
            return
        }
        #expect(reported[0]["notes"] == .array([.string(#"chain component 0 ("c_fill,e_grayscale"): c_fill: Cloudinary ignores a crop mode or gravity without w_, h_ or ar_; nothing is resized"#)]))
        #expect(reported[1]["notes"] == nil)
    }
}
