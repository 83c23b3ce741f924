import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// The two ways temporary files that killed writers left in a folder store are removed in
/// production: `derive prune`, and every worker's periodic sweep. No server: the embedded
/// default (SQLite and a folder).
@Suite struct AbandonedWritesCommandTests {
    static let hash = String(repeating: "cd", count: 32)

    /// An old temporary file with the store's name, a fresh one, and an old lookalike.
    struct Leftovers {
        let old, fresh, lookalike, output: URL

        init(store: URL) throws {
            let folder = store.appendingPathComponent(AbandonedWritesCommandTests.hash)
            old = folder.appendingPathComponent(AbandonedWrites.temporaryName(for: "thumb-0123456789abcdef.webp"))
            fresh = folder.appendingPathComponent(AbandonedWrites.temporaryName(for: "card-0123456789abcdef.avif"))
            lookalike = folder.appendingPathComponent("thumb-0123456789abcdef.webp.\(UUID().uuidString).tmp")
            output = folder.appendingPathComponent("thumb-0123456789abcdef.webp")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let twoHoursAgo = Date().addingTimeInterval(-7200)
            for (url, modified) in [(old, twoHoursAgo), (fresh, Date().addingTimeInterval(-60)), (lookalike, twoHoursAgo), (output, twoHoursAgo)] {
                try Data("bytes".utf8).write(to: url)
                try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path)
            }
            #expect(FileManager.default.fileExists(atPath: old.path))
        }

        func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }
    }

    @Test func derivePruneRemovesOldTemporaryFiles() throws {
        let workspace = try CommandLineTests.Workspace()
        let files = try Leftovers(store: URL(fileURLWithPath: workspace.store))
        // Two hours is not old enough when the threshold is three.
        let kept = try workspace.json(["prune", "--abandoned-after", "3h"])
        #expect(kept == .object(["abandonedWritesRemoved": .int(0), "unrecordedWritesRemoved": .int(0)]), "\(kept)")
        #expect(files.exists(files.old))
        // The default threshold is an hour; jobs are pruned in the same run.
        let pruned = try workspace.json(["prune", "--older-than", "30d"])
        #expect(pruned == .object(["deleted": .int(0), "abandonedWritesRemoved": .int(1), "unrecordedWritesRemoved": .int(0)]), "\(pruned)")
        #expect(!files.exists(files.old))
        #expect(files.exists(files.fresh) && files.exists(files.lookalike) && files.exists(files.output))
        #expect(try workspace.derive(["prune"]).stdout == "removed 0 abandoned writes from the store\nremoved 0 unrecorded writes from the store\n")
        let bad = try workspace.derive(["prune", "--abandoned-after", "0s"], expectFailure: true)
        #expect(bad.stderr.contains("--abandoned-after"), "\(bad.stderr)")
    }

    @Test func aRunningWorkerRemovesOldTemporaryFiles() throws {
        let workspace = try CommandLineTests.Workspace()
        let files = try Leftovers(store: URL(fileURLWithPath: workspace.store))
        // A job too, so the worker writes real outputs while it sweeps.
        try workspace.derive(["submit", Paths.fixture("photos/grace_hopper_noexif.jpg").path, "--chain", "c_thumb,w_32,h_32/f_webp"])
        let worker = try BackgroundProcess(["work", "--database", workspace.database, "--slots", "1"], environment: [
            "DERIVE_STORE": workspace.store, "DERIVE_LOG_FORMAT": "json", "DERIVE_ABANDONED_SWEEP_INTERVAL": "0.5",
        ])
        defer {
            worker.signal(SIGTERM)
            _ = worker.wait(timeout: 30)
        }
        try waitUntil("the worker removes the old temporary file", timeout: 30) { !files.exists(files.old) }
        try waitUntil("the job is done", timeout: 60) {
            guard case .array(let done) = try workspace.json(["jobs", "list", "--state", "completed"]) else { return false }
            return done.count == 1
        }
        #expect(files.exists(files.fresh) && files.exists(files.lookalike) && files.exists(files.output))
        #expect(worker.logLines.contains { $0.contains("removed writes") && $0.contains(files.old.lastPathComponent) },
                "\(worker.logLines.suffix(10).joined(separator: "\n"))")
        // The job's outputs are all in place, and no temporary file of the worker's own is left.
        let stored = try FileManager.default.subpathsOfDirectory(atPath: workspace.store)
        #expect(stored.contains { $0.hasSuffix(".webp") && !$0.hasPrefix(Self.hash) && !$0.contains("/.") }, "\(stored)")
        #expect(stored.filter { AbandonedWrites.isTemporaryName(URL(fileURLWithPath: $0).lastPathComponent) }
            == ["\(Self.hash)/\(files.fresh.lastPathComponent)"], "\(stored)")
    }
}
