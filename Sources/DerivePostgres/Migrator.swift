import DeriveLanguage
import DeriveJobs

/// One numbered SQL file from `Migrations/`.
public struct Migration: Sendable, Hashable {
    public var version: Int
    public var name: String
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// Recorded when applied, so a migration edited afterwards is noticed rather than
    /// silently skipped.
    public var checksum: String { SHA256.hex(sql) }
}

/// Applies migrations in order, each in its own transaction with its record in
/// `derive.schema_migrations`. Safe when several processes migrate at once (a session advisory
/// lock makes them take turns; the later ones find nothing to do) and idempotent.
public struct Migrator: Sendable {
    public struct Report: Sendable, Hashable {
        /// Applied by this run, in order.
        public var applied: [String]
        /// The schema version afterwards.
        public var version: Int
    }

    /// Any fixed key: it only has to be the same for every migrating process.
    static let lockKey = 7_308_618_286_216_373_504

    public var migrations: [Migration]

    public init(migrations: [Migration] = Migration.all) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// Refuses a database whose schema is older than this derive's migrations, with the fix.
    public func check(url: String) throws(DeriveError) {
        let version: Int
        do throws(PostgresError) {
            let connection = try PostgresConnection(url: url)
            let exists = try connection.query("SELECT to_regclass('derive.schema_migrations') IS NOT NULL").scalar == "t"
            version = exists ? Int(try connection.query("SELECT COALESCE(max(version), 0) FROM derive.schema_migrations").scalar ?? "0") ?? 0 : 0
        } catch {
            throw DeriveError(.databaseUnavailable, "PostgreSQL: \(error)", retryable: error.isTransient)
        }
        let expected = migrations.last?.version ?? 0
        if version < expected {
            throw DeriveError(.databaseUnavailable, "the database at \(Redacted.connectionString(url)) has Derive's schema at version \(version), "
                                  + "this derive needs \(expected): run `derive migrate` first", retryable: false)
        }
    }

    public func migrate(url: String) throws(DeriveError) -> Report {
        do throws(PostgresError) {
            return try migrate(PostgresConnection(url: url))
        } catch {
            throw DeriveError(.databaseUnavailable, "PostgreSQL: \(error)", retryable: error.isTransient)
        }
    }

    public func migrate(_ connection: PostgresConnection) throws(PostgresError) -> Report {
        try connection.query("SELECT pg_advisory_lock($1)", [String(Self.lockKey)])
        defer { _ = try? connection.query("SELECT pg_advisory_unlock($1)", [String(Self.lockKey)]) }
        try connection.execute("""
            CREATE SCHEMA IF NOT EXISTS derive;
            CREATE TABLE IF NOT EXISTS derive.schema_migrations (
                version    integer     PRIMARY KEY,
                name       text        NOT NULL,
                checksum   text        NOT NULL,
                applied_at timestamptz NOT NULL DEFAULT now()
            );
            """)
        let recorded = try connection.query("SELECT version, name, checksum FROM derive.schema_migrations ORDER BY version")
        var applied: [Int: String] = [:]
        try PostgresError.decoding { () throws(DeriveError) in
            for row in recorded.named("derive.schema_migrations") { applied[try row.int("version")] = try row.string("checksum") }
        }
        for migration in migrations {
            if let checksum = applied[migration.version], checksum != migration.checksum {
                throw PostgresError(message: "migration \(migration.name) was changed after it was applied to this database; "
                                        + "add a new migration instead of editing an applied one")
            }
        }
        var report = Report(applied: [], version: applied.keys.max() ?? 0)
        for migration in migrations where applied[migration.version] == nil {
            try connection.transaction { () throws(PostgresError) in
                do throws(PostgresError) {
                    try connection.execute(migration.sql)
                } catch {
                    throw PostgresError(sqlState: error.sqlState, message: "migration \(migration.name) failed: \(error.message)")
                }
                try connection.query("INSERT INTO derive.schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                                     [String(migration.version), migration.name, migration.checksum])
            }
            report.applied.append(migration.name)
            report.version = max(report.version, migration.version)
        }
        return report
    }
}
