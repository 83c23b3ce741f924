import DeriveLanguage
import DeriveJobs
import DeriveSQLite
import DeriveTestSupport
import Foundation
import Testing

/// `derive queue` and its pause and resume, and the file name `derive upload` records, on the
/// embedded default.
@Suite struct QueueCommandTests {
    typealias Workspace = CommandLineTests.Workspace

    @Test func aQueueIsPausedListedAndResumed() throws {
        let workspace = try Workspace()
        try workspace.derive(["submit", "https://images.example/a.jpg", "https://images.example/b.jpg", "--chain", "c_scale,w_10", "--queue", "bulk"])
        #expect(try workspace.json(["queue", "pause", "bulk"]) == .object(["queue": .string("bulk"), "paused": .bool(true), "alreadyPaused": .bool(false)]))
        #expect(try workspace.json(["queue", "pause", "bulk"])["alreadyPaused"] == .bool(true))
        // An empty queue may be paused too; both are listed, with who paused them.
        try workspace.derive(["queue", "pause", "later"])
        guard case .array(let queues) = try workspace.json(["queue"]) else { throw Missing() }
        #expect(queues.map { $0["queue"] } == [.string("bulk"), .string("later")])
        #expect(queues[0]["paused"] == .bool(true) && queues[0]["available"] == .int(2))
        if case .string(let who)? = queues[0]["pausedBy"] { #expect(who.hasPrefix("cli:")) } else { Issue.record("no pausedBy: \(queues[0])") }
        let text = try workspace.derive(["queue"]).stdout
        #expect(text.contains("paused 20") && text.contains("bulk"), "\(text)")
        let status = try workspace.derive(["status"]).stdout
        #expect(status.contains("bulk (paused)") && status.contains("Paused (no worker claims from them): bulk since"), "\(status)")
        // A worker serving the queue takes nothing from it while it is paused, and `--until-idle`
        // counts its waiting jobs as nothing to do (they wait for the resume).
        let run = try workspace.derive(["work", "--queue", "bulk", "--until-idle", "--slots", "1"])
        #expect(run.status == 0)
        guard case .array(let still) = try workspace.json(["queue"]) else { throw Missing() }
        #expect(still.first { $0["queue"] == .string("bulk") }?["available"] == .int(2), "\(still)")

        let refused = try workspace.derive(["queue", "pause", "a b"], expectFailure: true)
        #expect(refused.stderr.contains("a b is not a queue name"))
        #expect(try workspace.json(["queue", "resume", "bulk"])["wasPaused"] == .bool(true))
        #expect(try workspace.derive(["queue", "resume", "bulk"]).stdout.contains("queue bulk was not paused"))
        guard case .array(let after) = try workspace.json(["queue"]) else { throw Missing() }
        #expect(after.first { $0["queue"] == .string("bulk") }?["paused"] == .bool(false))
    }

    @Test func anUploadsFileNameIsRecordedBesideItsOriginal() throws {
        let workspace = try Workspace()
        let copy = workspace.folder.appendingPathComponent("Holiday at the beach.jpg")
        try FileManager.default.copyItem(at: Paths.fixture("photos/nikon-coolpix-p6000_gps.jpg"), to: copy)
        guard case .array(let uploaded) = try workspace.json(["upload", copy.path, "--chain", "c_scale,w_10"]),
              case .object(let first)? = uploaded.first, let id = first.first(where: { $0.key == "id" })?.value else { throw Missing() }
        guard case .sqlite(let path) = try QueueLocation.parse(workspace.database) else { throw Missing() }
        let store = try SQLiteJobStore(path: path)
        let job = try #require(try store.jobs(state: nil, queue: nil, limit: 10).first { .int(Int($0.id)) == id })
        guard case .string(let source)? = job.payload["source"] else { throw Missing() }
        #expect(source.contains("originals/") && !source.contains("Holiday"))
        #expect(try store.originalNames(of: [source]) == [source: ["Holiday at the beach.jpg"]])
    }
}
