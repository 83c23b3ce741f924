import DeriveLanguage
import DeriveServe
import DeriveTestSupport
import Foundation
import Testing

/// Issue 42: no input reaches a trap. `a_auto_right.hflip` (two rotation modes joined by '.', a
/// form Cloudinary documents) once ended every command and `derive serve` at a force unwrap in
/// the parser; each front end now reads it or refuses it with a reason.
@Suite(.serialized) struct TrapTests {
    @Test func explainReadsTheDottedModes() throws {
        let result = try DeriveBinary.run(["explain", "--chain", "c_fill,w_300,h_200,a_auto_right.hflip", "--source-size", "4000x3000"])
        #expect(result.status == 0, "\(result.stderr)")
        // The turn qualifies the resize (a portrait box on a landscape photo: it turns), the flip follows it.
        #expect(result.stdout.contains("\"rotate\"") || result.stdout.contains("flip"), "\(result.stdout.prefix(2000))")
    }

    @Test(arguments: ["a_auto_right.hflip", "a_auto_left.vflip.90", "a_hflip.auto_right", "a_auto.hflip", "a_exif.90"])
    func explainAnswersWithoutATrap(_ chain: String) throws {
        let result = try DeriveBinary.run(["explain", "--chain", chain, "--source-size", "4000x3000"])
        // Exit 0 with a plan, or 1 with the refusal naming the parameter: never a signal.
        #expect(result.status == 0 || result.status == 1, "\(chain): exit \(result.status): \(result.stderr.suffix(500))")
        if result.status == 1 { #expect(result.stderr.contains("a_"), "\(result.stderr)") }
    }

    @Test func runDerivesTheDottedModes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let source = Paths.repository.appendingPathComponent("Tests/Fixtures/group-of-six.jpg").path
        let result = try DeriveBinary.run(["run", source, "--chain", "c_fill,w_90,h_160,a_auto_right.hflip/f_png", "--out", folder.path])
        #expect(result.status == 0, "\(result.stderr.suffix(1000))")
        // Derived at the box's size (the turn and the flip are the plan's; AutoTurnLanguageTests checks it).
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]]
        let output = (report?.first?["outputs"] as? [[String: Any]])?.first
        #expect(output?["width"] as? Int == 90 && output?["height"] as? Int == 160, "\(result.stdout.suffix(800))")
    }

    /// A queued job carrying the chain once stopped every worker that claimed it: now it completes.
    @Test func aWorkerCompletesTheJob() throws {
        let workspace = try CommandLineTests.Workspace()
        try workspace.derive(["submit", Paths.repository.appendingPathComponent("Tests/Fixtures/group-of-six.jpg").path,
                              "--chain", "c_fill,w_90,h_160,a_auto_right.hflip/f_webp"])
        try workspace.derive(["work", "--until-idle"])
        let job = try workspace.json(["jobs", "show", "1"])
        #expect(job["state"] == .string("completed"), "\(job)")
    }

    /// The request that once stopped `derive serve`: unsigned, no credentials, for an asset that
    /// exists. It is refused before the transformation is read (not signed, not on the allowed
    /// list), and the server answers the next request.
    @Test func anUnsignedDeliveryOfTheTrapAnswersAndServeStaysUp() throws {
        let folder = try ServeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (server, port) = try ServeTests.start(folder)
        let upload = RawHTTP.sendBlocking(try ServeTests.signedUpload(["public_id": "trap"]), port: port, timeout: 120)
        #expect(upload.status == 200, "\(upload.text.suffix(300))")
        for path in ["a_auto_right.hflip/trap.jpg", "a_auto_right.hflip/v1/trap.jpg", "c_fill,w_10,h_20,a_auto_right.hflip/trap.png", "a_hflip.auto_right/trap.jpg"] {
            let reply = RawHTTP.sendBlocking(RawHTTP.request("GET", "/\(ServeTests.cloud)/image/upload/\(path)"), port: port, timeout: 30)
            #expect(reply.status == 401, "\(path): \(reply.status.map(String.init) ?? "no answer") \(reply.text.suffix(200))")
        }
        // Signed, so the language reads it: derived (or refused with 400), never a crash.
        let signature = CloudinarySigning.urlSignature("a_auto_right.hflip/trap.jpg", secret: ServeTests.secret)
        let signed = RawHTTP.sendBlocking(RawHTTP.request("GET", "/\(ServeTests.cloud)/image/upload/s--\(signature)--/a_auto_right.hflip/trap.jpg"), port: port, timeout: 120)
        #expect(signed.status == 200, "\(signed.status.map(String.init) ?? "no answer"): \(signed.text.suffix(300))")
        let health = RawHTTP.sendBlocking(RawHTTP.request("GET", "/healthz"), port: port, timeout: 10)
        #expect(health.status == 200, "derive serve stopped answering")
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
    }
}
