import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DeriveDigest
import DeriveTestSupport
import Foundation
import Testing

/// Work never done twice, with the real worker on PostgreSQL, the origin and S3: a job whose
/// outputs an earlier run recorded completes without decoding or writing; a key, once
/// recorded, keeps its bytes whatever other outputs a later job asks for beside it; an output
/// whose object went missing is derived again.
@Suite(.enabled(if: TestServers.available && TestServers.postgresAvailable, "needs the servers Scripts/test.sh starts"))
struct ReuseTests {
    static let thumb = #"{"name": "thumb", "chain": "c_fill,w_200,h_200,g_auto", "format": "webp"}"#
    static let large = #"{"name": "large", "chain": "c_limit,w_800", "format": "webp"}"#
    /// A step-spaced breakpoint set: three planned outputs of one name.
    static let set = #"{"name": "set", "chain": "c_scale", "format": "jpeg", "breakpoints": {"minWidth": 100, "maxWidth": 300, "step": 100}}"#

    struct Setup {
        let queue: TestQueue
        let s3: TestServers.S3
        let prefix = "reuse-\(UUID().uuidString.prefix(8).lowercased())"
        let source: String

        init(photo: String) throws {
            queue = try TestQueue(.postgres)
            s3 = try TestServers.s3()
            source = try TestServers.origin() + "/fixture/" + photo
        }

        var bucket: S3AssetStore {
            S3AssetStore(settings: S3Settings(endpoint: s3.endpoint, region: "us-east-1", accessKey: s3.accessKey, secretKey: s3.secretKey),
                         bucket: s3.bucket, prefix: prefix + "/")
        }

        /// Submits one job with `outputs`, runs a worker until the queue is empty, and returns
        /// the job's result.
        func derive(_ outputs: [String], environment: [String: String] = [:]) throws -> JSONValue {
            let sql = try queue.sql()
            let id = try #require(JobID(try sql.query("SELECT derive.submit($1, $2::jsonb)", [source, "[" + outputs.joined(separator: ",") + "]"]).scalar ?? ""))
            let worker = try BackgroundProcess(["work", "--database", queue.location, "--store", "s3://\(s3.bucket)/\(prefix)", "--until-idle"],
                                               environment: WorkerEndToEndTests.environment(s3).merging(environment) { $1 })
            #expect(worker.wait(timeout: 120) == 0, "\(worker.logLines.suffix(10).joined(separator: "\n"))")
            let job = try #require(try queue.store.job(id))
            #expect(job.state == .completed, "\(job.state) \(job.errors)")
            return try #require(job.result)
        }

        /// Each output of a result: name (`set@200` for a breakpoint width) → (key, sha256, reused).
        func outputs(_ result: JSONValue) throws -> [String: (key: String, sha256: String, reused: Bool)] {
            guard case .array(let items)? = result["outputs"] else { throw Missing() }
            var outputs: [String: (key: String, sha256: String, reused: Bool)] = [:]
            for item in items {
                guard case .string(let name)? = item["name"], case .string(let location)? = item["location"],
                      case .string(let sha)? = item["sha256"] else { throw Missing() }
                let key = String(try #require(location.components(separatedBy: prefix + "/").last))
                let width = if case .number(let width)? = item["breakpointWidth"] { "@\(width.text)" } else { "" }
                outputs[name + width] = (key, sha, item["reused"] == .bool(true))
            }
            #expect(outputs.count == items.count, "an output is listed twice: \(items.count) items")
            return outputs
        }

        /// The object's SHA-256 as S3 has it now.
        func storedSHA(_ key: String) throws -> String? {
            try bucket.get(try StorageKey(key)).map { ContentHash.sha256($0) }
        }
    }

    @Test func aJobWhoseOutputsAreRecordedCompletesWithoutDecodingOrWriting() throws {
        let setup = try Setup(photo: "photos/grace_hopper_noexif.jpg")
        let first = try setup.derive([Self.thumb, Self.large, Self.set])
        let firstOutputs = try setup.outputs(first)
        #expect(firstOutputs.count == 5 && firstOutputs.values.allSatisfy { !$0.reused }, "\(firstOutputs.keys.sorted())")
        #expect(first["source"]?["decode"] != .null)

        let again = try setup.derive([Self.thumb, Self.large, Self.set])
        let againOutputs = try setup.outputs(again)
        #expect(againOutputs.count == 5 && againOutputs.values.allSatisfy(\.reused), "\(againOutputs)")
        #expect(again["source"]?["decode"] == .null, "nothing was decoded")
        #expect(again["source"]?["perceptualHash"] == first["source"]?["perceptualHash"], "the asset's metadata comes from its row")
        for (name, output) in againOutputs {
            #expect(output.key == firstOutputs[name]?.key && output.sha256 == firstOutputs[name]?.sha256)
            #expect(try setup.storedSHA(output.key) == output.sha256)
        }
        let sql = try setup.queue.sql()
        #expect(try sql.query("SELECT count(*) FROM derive.derivatives").scalar == "5", "the rows are rewritten, not added")
        #expect(try sql.query("SELECT count(DISTINCT job_id) FROM derive.derivatives").scalar == "1")

        // Turned off, the same job derives everything again.
        let forced = try setup.derive([Self.thumb, Self.large, Self.set], environment: ["DERIVE_REUSE": "off"])
        #expect(try setup.outputs(forced).values.allSatisfy { !$0.reused })
        #expect(forced["source"]?["decode"] != .null)
    }

    /// The thumbnail derived alone is decoded smaller than beside an 800 px output (its pixels
    /// then differ a little); its key does not. The second job reuses the first's thumbnail, so the
    /// key keeps one SHA-256, in S3 and in the row, in either order.
    @Test(arguments: [false, true])
    func aKeyKeepsItsBytesWhateverIsDerivedBesideIt(largeFirst: Bool) throws {
        let setup = try Setup(photo: largeFirst ? "photos/nikon-coolpix-p6000_gps.jpg" : "photos/kodak-pixpro-az521.jpg")
        let first = try setup.outputs(try setup.derive(largeFirst ? [Self.thumb, Self.large] : [Self.thumb]))
        let second = try setup.outputs(try setup.derive(largeFirst ? [Self.thumb] : [Self.thumb, Self.large]))
        let thumb = try #require(first["thumb"]), again = try #require(second["thumb"])
        #expect(again.reused && again.key == thumb.key && again.sha256 == thumb.sha256)
        #expect(try setup.storedSHA(thumb.key) == thumb.sha256)
        #expect(largeFirst || second["large"]?.reused == false, "the new output is derived")
        let rows = try setup.queue.sql().query("SELECT sha256 FROM derive.derivatives WHERE output_name = 'thumb'").rows
        #expect(rows.count == 1 && rows[0][0] == thumb.sha256)
    }

    /// The small output's object is deleted: the next job derives it alone (decoded at the
    /// size it needs, not at the large output's) and reuses the large output.
    @Test func anOutputWhoseObjectIsGoneIsDerivedAgain() throws {
        let small = #"{"name": "small", "chain": "c_scale,w_100", "format": "webp"}"#
        let setup = try Setup(photo: "photos/kodak-pixpro-az521.jpg")
        let first = try setup.derive([small, Self.large])
        let gone = try #require(try setup.outputs(first)["small"])
        try setup.bucket.delete(try StorageKey(gone.key))
        let again = try setup.derive([small, Self.large])
        let second = try setup.outputs(again)
        #expect(second["large"]?.reused == true)
        #expect(second["small"]?.reused == false && second["small"]?.key == gone.key)
        #expect(try setup.storedSHA(gone.key) == second["small"]?.sha256)
        guard case .number(let decoded)? = again["source"]?["decode"]?["width"],
              case .number(let full)? = first["source"]?["decode"]?["width"] else { throw Missing() }
        #expect(decoded.intValue == 100 && full.intValue == 800, "decoded \(decoded.text) px wide for the small output alone, \(full.text) for both")
    }
}
