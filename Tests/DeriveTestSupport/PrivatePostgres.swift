import Foundation

/// A PostgreSQL cluster of one test's own, started with the same `Scripts/lib.sh` helpers as
/// the suite's shared one, for tests that stop and restart the server under running workers
/// (the shared cluster serves every other test at the same time). Stopped and removed with
/// the object.
public final class PrivatePostgres: @unchecked Sendable {
    public let directory: URL
    public let port: Int
    /// `postgresql://postgres@127.0.0.1:<port>/postgres`.
    public let url: String

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("derive-pg-\(UUID().uuidString.prefix(8))")
        let found = try Python.run("import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
        guard let port = Int(found.output.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw Failed(what: "no free port") }
        self.port = port
        url = "postgresql://postgres@127.0.0.1:\(port)/postgres"
        try shell("start_postgres '\(directory.path)' \(port) fsync=off full_page_writes=off")
    }

    deinit {
        _ = try? shell("stop_postgres '\(directory.path)'")
        try? FileManager.default.removeItem(at: directory)
    }

    /// `pg_ctl restart` with a shutdown mode: `fast` (sessions ended, clean) or `immediate`
    /// (no clean shutdown: crash recovery at the next start).
    public func restart(mode: String) throws { try pgctl("-m \(mode) restart") }

    public func stop(mode: String) throws { try pgctl("-m \(mode) stop") }

    /// Starts a stopped cluster again with the options it had.
    public func start() throws {
        try pgctl("-l '\(directory.path)/server.log' -o \"-p \(port) -k '\(directory.path)' -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off\" start")
    }

    private func pgctl(_ arguments: String) throws {
        try shell("as_postgres \"$(postgres_bin)/pg_ctl\" -D '\(directory.path)/data' -w -t 60 \(arguments)")
    }

    private func shell(_ command: String) throws {
        do {
            try Shell.run("source Scripts/lib.sh; " + command)
        } catch let failure as Shell.Failed {
            throw Failed(what: failure.description)
        }
    }

    public struct Failed: Error, CustomStringConvertible {
        public var what: String
        public var description: String { "PostgreSQL: \(what)" }
    }
}
