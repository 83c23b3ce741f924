import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// A worker on the real PostgreSQL records the faces it found with the asset, and a later job
/// that did not look keeps them.
@Suite(.enabled(if: TestServers.available && TestServers.postgresAvailable, "needs the servers Scripts/test.sh starts"))
struct FaceRecordTests {
    @Test func theAssetRowCarriesTheFacesAndKeepsThem() throws {
        let queue = try TestQueue(.postgres)
        let origin = try TestServers.origin()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-faces-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let sql = try queue.sql()
        let source = origin + "/fixture/photos/grace_hopper_noexif.jpg"
        let work = ["work", "--database", queue.location, "--store", folder.path, "--slots", "1", "--until-idle"]
        let environment = ["DERIVE_FETCH_ALLOW": "127.0.0.1/32", "DERIVE_LOG_FORMAT": "json"]

        let faces = #"[{"name": "card", "chain": "c_fill,w_600,h_315,g_faces/f_webp"}, {"name": "hidden", "chain": "c_limit,w_300/e_pixelate_faces/f_png"}]"#
        _ = try sql.query("SELECT derive.submit($1, $2::jsonb)", [source, faces])
        let first = try BackgroundProcess(work, environment: environment)
        #expect(first.wait(timeout: 120) == 0, "\(first.logLines.suffix(10).joined(separator: "\n"))")

        let row = try #require(try sql.query("SELECT faces::text FROM derive.assets").scalar)
        let recorded = try JSONParser().parse(row)
        #expect(recorded["count"] == .int(1) && recorded["detector"] == .string("centerface"))
        guard case .array(let boxes)? = recorded["boxes"], case .number(let x)? = boxes.first?["x"], case .number(let width)? = boxes.first?["width"] else {
            Issue.record("no boxes in \(row)")
            return
        }
        #expect((150...220).contains(x.intValue ?? 0) && (160...230).contains(width.intValue ?? 0))
        // The job's report says which window each crop took and why.
        let kept = try sql.query("""
            SELECT jsonb_path_exists(result, '$.outputs[*].crops[*] ? (@.gravity == "faces" && @.facesKept == 1)') FROM derive.job_archive
            """).scalar
        #expect(kept == "t")

        // A job that needs no faces does not look, and the row keeps what the first one found.
        _ = try sql.query("SELECT derive.submit($1, $2::jsonb)", [source, #"[{"name": "small", "chain": "c_limit,w_100/f_png"}]"#])
        let second = try BackgroundProcess(work, environment: environment)
        #expect(second.wait(timeout: 120) == 0, "\(second.logLines.suffix(10).joined(separator: "\n"))")
        #expect(try sql.query("SELECT count(*) FROM derive.job_archive WHERE outcome = 'completed'").scalar == "2")
        #expect(try sql.query("SELECT faces->>'count' FROM derive.assets").scalar == "1")
    }
}
