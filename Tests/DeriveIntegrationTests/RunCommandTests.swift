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

