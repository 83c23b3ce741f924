import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import DeriveTestSupport
import Testing

/// `derive explain` as a user runs it: the built binary, its stdout, stderr and exit status.
@Suite struct ExplainCommandTests {
    static func derive(_ arguments: [String]) throws -> DeriveBinary.Result {
        try DeriveBinary.run(arguments)
    }

    @Test func explainsAStringOnARealPhotoWithoutDecoding() throws {
        let arguments = ["explain", "--chain", "c_fill,w_250,h_250,g_auto/r_max/e_sepia", Paths.fixture("photos/canon-sx60hs_orient6.jpg").path]
        let result = try DeriveBinary.run(arguments, environment: ["DERIVE_FACE_DETECTOR": "hog"])
        #expect(result.status == 0, "\(result.stderr)")
        let plan = try JSONParser().parse(result.stdout)
        // g_auto keeps faces, so the decode is large enough for the detector: for dlib's, a
        // shorter side of 650 pixels (it enlarges it twice, to find faces of 5% of that side)...
        #expect(plan["decode"]?["width"] == .int(650) && plan["decode"]?["height"] == .int(867))
        // ...for CenterFace, what fits its 576x416 canvas (the upright photo is 3:4).
        let net = try JSONParser().parse(try DeriveBinary.run(arguments, environment: ["DERIVE_FACE_DETECTOR": "centerface"]).stdout)
        #expect(net["decode"]?["width"] == .int(312) && net["decode"]?["height"] == .int(416))
        #expect(plan["source"]?["orientation"] == .int(6))
        guard case .array(let outputs)? = plan["outputs"] else {
            Issue.record("no outputs in \(result.stdout)")
            return
        }
        #expect(outputs[0]["name"] == .string("default"))
        #expect(outputs[0]["width"] == .int(250) && outputs[0]["height"] == .int(250))
        #expect(outputs[0]["transformation"] == .string("c_fill,w_250,h_250,g_auto/r_max/e_sepia"))
    }

    /// The plan says which encoder effort each output will be written at and why (issue 40):
    /// the deployment's setting, an output's own, or Derive's default; per format under f_auto.
    @Test func explainSaysWhichEffortIsUsed() throws {
        let chain = #"{"outputs": [{"name": "a", "chain": "w_100", "format": "avif"}, {"name": "b", "chain": "w_100", "format": "webp", "effort": 6}, {"name": "c", "chain": "w_100", "format": "auto", "quality": "auto"}]}"#
        let result = try DeriveBinary.run(["explain", "--chain", chain, "--source-size", "800x600"], environment: ["DERIVE_AVIF_EFFORT": "2"])
        #expect(result.status == 0, "\(result.stderr)")
        let plan = try JSONParser().parse(result.stdout)
        guard case .array(let outputs)? = plan["outputs"] else {
            Issue.record("no outputs in \(result.stdout)")
            return
        }
        #expect(outputs[0]["effort"]?["effort"] == .int(2) && outputs[0]["effort"]?["from"] == .string("DERIVE_AVIF_EFFORT"))
        #expect(outputs[1]["effort"]?["effort"] == .int(6) && outputs[1]["effort"]?["from"] == .string("the output's effort"))
        #expect(outputs[2]["effort"]?["webp"]?["effort"] == .int(EngineSettings.defaultEfforts[.webp]!))
        #expect(outputs[2]["effort"]?["avif"]?["from"] == .string("DERIVE_AVIF_EFFORT"))
    }

    /// The corpus's PSD forms (issue 30) are planned; with a real PSD, the plan's source is what
    /// the selection is (the embedded PNG, the layers' canvas), and a layer the document does
    /// not have is refused with the ones it has.
    @Test func explainsPhotoshopLayersAndSmartObjects() throws {
        for chain in ["pg_name:record_cover", "pg_name:record_cover;Shadow", "pg_name:record_cover;Shadow/w_300", "pg_embedded:2",
                      "pg_embedded:name:skyline.jpg;bg.jpg", "pg_embedded:name:myLayer;myLayer2"] {
            let result = try Self.derive(["explain", "--chain", chain, "--source-size", "800x600", "--format", "psd"])
            #expect(result.status == 0, "\(chain): \(result.stderr)")
        }
        let psd = Paths.repository.appendingPathComponent("Tests/Fixtures/psd/placedLayer.psd").path
        let embedded = try JSONParser().parse(try Self.derive(["explain", "--chain", "pg_embedded:3/w_32", psd]).stdout)
        #expect(embedded["source"]?["format"] == .string("png") && embedded["source"]?["width"] == .int(64))
        let layers = try JSONParser().parse(try Self.derive(["explain", "--chain", "pg_name:linked-psd;Background", psd]).stdout)
        #expect(layers["source"]?["width"] == .int(256) && layers["source"]?["hasAlpha"] == .bool(true))
        let missing = try Self.derive(["explain", "--chain", "pg_name:record_cover", psd])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains(#"no layer "record_cover"; its layers are "Background", "linked-png", "linked-psd", "embedded-png""#), "\(missing.stderr)")
        // Within the configured limits, as a job reads it: the 256x256 document is past 1,000 pixels.
        let limited = try DeriveBinary.run(["explain", "--chain", "pg_name:linked-psd", psd], environment: ["DERIVE_MAX_INPUT_PIXELS": "1000"])
        #expect(limited.status != 0)
        #expect(limited.stderr.contains("limit_exceeded") && limited.stderr.contains("DERIVE_MAX_INPUT_PIXELS"), "\(limited.stderr)")
    }

    /// `--tag` and `--context` give the asset's values, which conditions read (issue 30); a bad
    /// one is refused with the flag and the fix.
    @Test func tagsAndContextDecideTheBranch() throws {
        let chain = "if_!sale!_in_tags_and_ctx:!kind!_eq_!shoes!/c_scale,w_100/if_else/c_scale,w_50/if_end"
        func width(_ extra: [String]) throws -> JSONValue? {
            let result = try Self.derive(["explain", "--chain", chain, "--source-size", "400x300"] + extra)
            #expect(result.status == 0, "\(result.stderr)")
            guard case .array(let outputs)? = try JSONParser().parse(result.stdout)["outputs"] else { return nil }
            return outputs.first?["width"]
        }
        #expect(try width(["--tag", "new", "--tag", "sale", "--context", "kind=shoes"]) == .int(100))
        #expect(try width(["--tag", "sale"]) == .int(50))
        #expect(try width([]) == .int(50))
        let bad = try Self.derive(["explain", "--chain", chain, "--source-size", "400x300", "--context", "kind", "--tag", "a,b"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("--context \"kind\": write key=value") && bad.stderr.contains("a tag cannot hold ','"), "\(bad.stderr)")
    }

    /// A crop mode Cloudinary ignores is accepted, and `explain` says it was left out.
    @Test func explainSaysWhatItLeftOut() throws {
        let result = try Self.derive(["explain", "--chain", "c_fill,e_grayscale", "--source-size", "4000x3000"])
        #expect(result.status == 0, "\(result.stderr)")
        let plan = try JSONParser().parse(result.stdout)
        guard case .array(let outputs)? = plan["outputs"], case .array(let notes)? = outputs[0]["notes"] else {
            Issue.record("no notes in \(result.stdout)")
            return
        }
        #expect(notes == [.string(#"chain component 0 ("c_fill,e_grayscale"): c_fill: Cloudinary ignores a crop mode or gravity without w_, h_ or ar_; nothing is resized"#)])
        #expect(outputs[0]["width"] == .int(4000) && outputs[0]["transformation"] == .string("e_grayscale"))
    }

    @Test func explainsAJobFileWithAGivenSourceSize() throws {
        let job = FileManager.default.temporaryDirectory.appendingPathComponent("derive-explain-\(UUID().uuidString).json")
        try #"{"source": "https://example.com/a.jpg", "outputs": [{"name": "thumb", "chain": "c_thumb,w_64,h_64", "format": "webp"}, {"name": "full", "chain": [{"resize": {"mode": "limit", "width": 2048}}]}]}"#
            .write(to: job, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: job) }
        let result = try Self.derive(["explain", "--chain", job.path, "--source-size", "4000x3000", "--orientation", "6"])
        #expect(result.status == 0, "\(result.stderr)")
        let plan = try JSONParser().parse(result.stdout)
        #expect(plan["decode"]?["width"] == .int(2048) && plan["decode"]?["height"] == .int(2731))
        guard case .array(let outputs)? = plan["outputs"] else { Issue.record("the plan has no outputs: \(result.stdout)"); return }
        #expect(outputs.map { $0["name"] } == [.string("thumb"), .string("full")])
        #expect(outputs[1]["width"] == .int(2048) && outputs[1]["height"] == .int(2731))
    }

    @Test func invalidInputGoesToStandardErrorWithAFailingStatus() throws {
        let result = try Self.derive(["explain", "--chain", "c_fill,w_250,h_250,g_auto/r_max/e_sepai", "--source-size", "100x100"])
        #expect(result.status != 0)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(#"chain component 2 ("e_sepai"): e_sepai: unknown to Cloudinary (no effect "sepai"); did you mean "sepia"?"#))

        let unreadable = try Self.derive(["explain", "--chain", "w_10", Paths.fixture("hostile/crafted_text-file-named.jpg").path])
        #expect(unreadable.status != 0)
        #expect(unreadable.stderr.contains("not an image format Derive recognises; give --source-size instead"))
    }
}
