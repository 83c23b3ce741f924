import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// `derive run` as the README's quick start uses it.
@Suite struct RunCommandTests {
    @Test func runsTheSampleJobAndReportsEveryOutput() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("derive-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let samples = Paths.repository.appendingPathComponent("Samples")
        let result = try DeriveBinary.run(["run", samples.appendingPathComponent("landscape-orientation-6.jpg").path,
                                           samples.appendingPathComponent("coffee.png").path,
                                           "--chain", samples.appendingPathComponent("web-outputs.json").path, "--out", out.path])
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let reports) = try JSONParser().parse(result.stdout) else {
            Issue.record("expected an array of reports")
            return
        }
        #expect(reports.count == 2)
        let first = reports[0]
        #expect(first["source"]?["width"] == .int(1800) && first["source"]?["height"] == .int(1200))
        #expect(first["source"]?["orientation"] == .int(6))
        guard case .array(let outputs)? = first["outputs"] else { Issue.record("the report has no outputs: \(first)"); return }
        #expect(outputs.map { $0["name"] } == [.string("thumb"), .string("card"), .string("full")])
        for output in outputs {
            guard case .string(let location)? = output["location"], case .number(let size)? = output["bytes"], let bytes = size.intValue else {
                Issue.record("output without a location or size: \(output)")
                continue
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: location)
            #expect(attributes[.size] as? Int == bytes)
        }
        #expect(outputs[2]["width"] == .int(1800) && outputs[2]["height"] == .int(1200))
        for stage in ["header", "plan", "decode", "metadata", "total"] { #expect(first["timings"]?[stage] != nil) }
    }

    /// A quality chosen by a tag (issue 30): the file is encoded at the branch's quality, and a
    /// photograph at 90 is several times the bytes of one at 30.
    @Test func aTagChoosesTheQualityTheFileIsEncodedAt() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("derive-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let source = Paths.repository.appendingPathComponent("Samples/grace-hopper.jpg").path
        let chain = "$qualtag_!Pro!/if_$qualtag_in_tags,q_90/if_else,q_30/w_500"
        func encoded(tag: String) throws -> (quality: JSONValue?, bytes: Int) {
            let folder = out.appendingPathComponent(tag).path
            let result = try DeriveBinary.run(["run", source, "--chain", chain, "--tag", tag, "--out", folder])
            #expect(result.status == 0, "\(result.stderr)")
            let report = try JSONParser().parse(result.stdout)
            guard case .array(let reports) = report, case .array(let outputs)? = reports.first?["outputs"],
                  case .string(let location)? = outputs.first?["location"] else {
                Issue.record("no output location in \(report)")
                return (nil, 0)
            }
            let bytes = try #require(try FileManager.default.attributesOfItem(atPath: location)[.size] as? Int)
            return (outputs.first?["quality"], bytes)
        }
        let pro = try encoded(tag: "Pro"), plain = try encoded(tag: "other")
        #expect(pro.quality == .int(90) && plain.quality == .int(30), "\(pro) \(plain)")
        #expect(pro.bytes > 3 * plain.bytes, "\(pro.bytes) bytes at 90, \(plain.bytes) at 30")
    }

    @Test func theReportSaysWhatFaceEffectsAndCropsDidAndExplainSaysWhatTheyWillDo() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("derive-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        func first(_ value: JSONValue?) -> JSONValue? {
            if case .array(let items)? = value { return items.first }
            return nil
        }
        // The street of masked people: at 640x480 the man in the foreground scores below the
        // crops' threshold (FaceTests.masked), so the pixelation covers him and says so.
        let masked = Paths.repository.appendingPathComponent("Benchmarks/faces/images/ultralight-masked-img3.jpg").path
        let hidden = try DeriveBinary.run(["run", masked, "--chain", "e_pixelate_faces/f_png", "--out", out.path],
                                          environment: ["DERIVE_FACE_DETECTION_CANVAS": "640x480"])
        #expect(hidden.status == 0, "\(hidden.stderr)")
        let report = try #require(first(try JSONParser().parse(hidden.stdout)))
        guard case .number(let count)? = report["source"]?["faces"]?["count"], case .number(let below)? = report["source"]?["faces"]?["belowCropThreshold"],
              case .array(let boxes)? = report["source"]?["faces"]?["boxes"] else {
            Issue.record("no faces in \(report)")
            return
        }
        #expect((below.intValue ?? 0) >= 1 && (count.intValue ?? 0) + (below.intValue ?? 0) == boxes.count)
        let output = try #require(first(report["outputs"]))
        #expect(output["privacy"] == .array([.object([
            "effect": .string("pixelate_faces"), "covered": .int(boxes.count), "belowCropThreshold": .number(below),
        ])]))
        guard case .array(let choices)? = output["choices"] else { Issue.record("no choices in \(output)"); return }
        #expect(choices.contains(.string("e_pixelate_faces covered \(boxes.count) faces (\(below.intValue ?? 0) below the crops' threshold)")), "\(choices)")

        // A 100 px tall window of the portrait cannot keep her face: the report says it kept her eyes.
        let portrait = Paths.repository.appendingPathComponent("Samples/grace-hopper.jpg").path
        let cut = try DeriveBinary.run(["run", portrait, "--chain", "c_fill,w_600,h_100,g_face/f_png", "--out", out.path])
        #expect(cut.status == 0, "\(cut.stderr)")
        let crop = try #require(first(first(first(try JSONParser().parse(cut.stdout))?["outputs"])?["crops"]))
        #expect(crop["faceCut"] == .object(["kept": .array([.string("eyes")]), "lost": .array([.string("mouth"), .string("chin")])]))

        // derive explain, which decodes nothing, says what the output will do with faces.
        let explained = try DeriveBinary.run(["explain", "--chain", "c_fill,w_600,h_100,g_face/e_blur_faces", portrait])
        #expect(explained.status == 0, "\(explained.stderr)")
        guard case .array(let notes)? = first(try JSONParser().parse(explained.stdout)["outputs"])?["faces"] else {
            Issue.record("no faces notes in \(explained.stdout)")
            return
        }
        #expect(notes.count == 2)
    }

    @Test func aBadSourceFailsItselfAndNotTheOthers() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("derive-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try DeriveBinary.run(["run", Paths.fixture("hostile/crafted_text-file-named.jpg").path,
                                           Paths.fixture("photos/grace_hopper_noexif.jpg").path,
                                           "--chain", "c_thumb,w_64,h_64/f_webp", "--out", out.path])
        #expect(result.status != 0)
        #expect(result.stderr.contains("unsupported_format"))
        guard case .array(let reports) = try JSONParser().parse(result.stdout) else { Issue.record("not a list of reports: \(result.stdout)"); return }
        #expect(reports[0]["error"]?["code"] == .string("unsupported_format"))
        #expect(reports[1]["outputs"] != nil)
    }

    @Test func loadersAreAllowedByFlagOrEnvironment() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("derive-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let svg = Paths.fixture("formats/svg-logo.svg").path
        let blocked = try DeriveBinary.run(["run", svg, "--chain", "w_100/f_png", "--out", out.path])
        #expect(blocked.status != 0 && blocked.stderr.contains("DERIVE_ALLOW_LOADERS=svg"))
        #expect(try DeriveBinary.run(["run", svg, "--chain", "w_100/f_png", "--out", out.path, "--allow-loader", "svg"]).status == 0)
        #expect(try DeriveBinary.run(["run", svg, "--chain", "w_100/f_png", "--out", out.path], environment: ["DERIVE_ALLOW_LOADERS": "svg,pdf"]).status == 0)
    }
}

