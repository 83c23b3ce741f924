import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveSQLite
import Foundation

/// The two stores the conformance suite runs against.
public enum StoreKind: String, CaseIterable, Sendable {
    case postgres, sqlite
}

/// A fresh, empty queue for one test: a new database in the PostgreSQL cluster the test
/// command started, or a new SQLite file. Dropped when the test lets go of it.
public final class TestQueue: @unchecked Sendable {
    public let kind: StoreKind
    public let store: any DeriveDatabase
    /// `postgresql://…/derive_test_…` or `sqlite:/tmp/…`.
    public let location: String
    private let cleanup: () -> Void

    public init(_ kind: StoreKind, rescanInterval: Double = 1) throws {
        self.kind = kind
        switch kind {
        case .postgres:
            let (url, drop) = try Self.createDatabase()
            _ = try Migrator().migrate(url: url)
            store = PostgresJobStore(url: url, rescanInterval: rescanInterval)
            location = url
            cleanup = drop
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-queue-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("queue.sqlite").path
            store = try SQLiteJobStore(path: path)
            location = "sqlite:" + path
            cleanup = { try? FileManager.default.removeItem(at: folder) }
        }
    }

    /// Undone before the queue itself (roles made for the test).
    private var undo: [() -> Void] = []

    deinit {
        undo.reversed().forEach { $0() }
        cleanup()
    }

    /// A new login role that is a member of `role` (`derive_submitter`, `derive_worker`), and
    /// this queue's URL as that role. Dropped with the queue.
    public func login(as role: String) throws -> String {
        let admin = try sql()
        let name = role.replacingOccurrences(of: "derive_", with: "") + "_" + UUID().uuidString.prefix(8).lowercased()
        try admin.execute("CREATE ROLE \(name) LOGIN; GRANT \(role) TO \(name)")
        undo.append { _ = try? admin.execute("DROP OWNED BY \(name); DROP ROLE \(name)") }
        var components = URLComponents(string: location)!
        components.user = name
        return components.string!
    }

    /// Another store on the same queue, as another worker process would open it.
    public func openAnother(rescanInterval: Double = 1) throws -> any DeriveDatabase {
        switch try QueueLocation.parse(location) {
        case .postgres(let url): return PostgresJobStore(url: url, rescanInterval: rescanInterval)
        case .sqlite(let path): return try SQLiteJobStore(path: path)
        }
    }

    /// The cluster's URL with another database name.
    public static func url(database: String, user: String = "postgres") throws -> String {
        var components = URLComponents(string: try TestServers.postgres())!
        components.path = "/" + database
        components.user = user
        return components.string!
    }

    /// A new, empty database; the closure drops it (and disconnects whoever is still in it).
    public static func createDatabase() throws -> (url: String, drop: () -> Void) {
        let name = "derive_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let admin = try PostgresConnection(url: try TestServers.postgres())
        try admin.execute("CREATE DATABASE \(name)")
        let url = try url(database: name)
        return (url, { _ = try? admin.execute("DROP DATABASE IF EXISTS \(name) WITH (FORCE)") })
    }

    /// Runs SQL (statements valid in both dialects) straight on the queue's database.
    public func execute(_ sql: String) throws {
        switch try QueueLocation.parse(location) {
        case .postgres(let url): try PostgresConnection(url: url).execute(sql)
        case .sqlite(let path): try SQLiteConnection(path: path).execute(sql)
        }
    }

    /// A direct connection to this queue's PostgreSQL database, for checks in plain SQL.
    public func sql() throws -> PostgresConnection {
        try PostgresConnection(url: location)
    }
}

/// Whether the suite can run `kind`: SQLite always; PostgreSQL when the test command started it.
public func available(_ kind: StoreKind) -> Bool {
    kind == .sqlite || TestServers.postgresAvailable
}

extension StoreKind {
    /// The stores the parameterised tests run on here: SQLite always, PostgreSQL where the test
    /// command started it. A suite whose PostgreSQL cases are left out says so with a skipped
    /// `postgresCasesRun` test, which `Scripts/test.sh` treats as a failure.
    public static var runnable: [StoreKind] { allCases.filter(available) }
}

public func document(_ source: String = "https://images.example/a.jpg") -> JSONValue {
    .object(["version": .int(1), "source": .string(source), "preset": .string("web")])
}

/// PostgreSQL keeps job documents as jsonb, which orders object members its own way: compare
/// documents by content.
public func same(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
    a.map(JSONWriter.canonical) == b.map(JSONWriter.canonical)
}

/// Policies with predictable delays: no backoff at all, or a very long one.
public let retryAtOnce = RetryPolicy(backoff: Backoff(base: 0, factor: 2, maximum: 0))
public let retryMuchLater = RetryPolicy(backoff: Backoff(base: 1000, factor: 1, maximum: 1000))
public let passing = DeriveError(.sourceUnavailable, "origin answered 503")
public let permanent = DeriveError(.invalidJob, "outputs[0].chain[0]: unknown step \"blur2\"")

/// The three `JobStore`s the conformance suite holds to one set of semantics.
public enum JobStoreKind: String, CaseIterable, Sendable {
    case memory, sqlite, postgres

    /// Memory and SQLite always; PostgreSQL where the test command started it.
    public static var runnable: [JobStoreKind] { allCases.filter { $0 != .postgres || TestServers.postgresAvailable } }
}

/// A fresh, empty queue of one kind, seen only as a `JobStore` and `QueueInspector`.
public final class JobStoreUnderTest: @unchecked Sendable {
    public let kind: JobStoreKind
    public let store: any JobStore & QueueInspector
    /// Keeps a SQL queue's database until the test lets go.
    private let database: TestQueue?

    public init(_ kind: JobStoreKind) throws {
        self.kind = kind
        switch kind {
        case .memory:
            database = nil
            store = MemoryJobQueue()
        case .sqlite, .postgres:
            let database = try TestQueue(kind == .sqlite ? .sqlite : .postgres)
            self.database = database
            store = database.store
        }
    }

    /// Another handle on the same queue, as another worker would open it (in memory, the same
    /// queue: there is no other process).
    public func openAnother() throws -> any JobStore & QueueInspector {
        try database?.openAnother() ?? store
    }
}
