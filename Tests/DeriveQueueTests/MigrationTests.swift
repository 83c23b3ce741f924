import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveSQLite
import DeriveTestSupport
import Foundation
import Synchronization
import Testing

@Suite struct MigrationTests {
    /// The binary carries Migrations/*.sql (Scripts/embed-migrations.sh writes them in).
    @Test func theEmbeddedMigrationsAreTheSQLFiles() throws {
        let folder = Paths.repository.appendingPathComponent("Migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.map { String($0.dropLast(4)) } == Migration.all.map(\.name), "run Scripts/embed-migrations.sh")
        for (file, migration) in zip(files, Migration.all) {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            #expect(text == migration.sql + "\n", "\(file) differs from its embedded copy: run Scripts/embed-migrations.sh")
            #expect(Int(file.prefix(4)) == migration.version)
        }
        #expect(Set(Migration.all.map(\.version)).count == Migration.all.count)
    }

    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func migratingAgainAppliesNothing() throws {
        let (url, drop) = try TestQueue.createDatabase()
        defer { drop() }
        let first = try Migrator().migrate(url: url)
        #expect(first.applied == Migration.all.map(\.name) && first.version == Migration.all.last?.version)
        let second = try Migrator().migrate(url: url)
        #expect(second.applied.isEmpty && second.version == first.version)
    }

    /// Several processes migrating one database at once take turns; it ends migrated once.
    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func concurrentMigrationsTakeTurns() throws {
        let (url, drop) = try TestQueue.createDatabase()
        defer { drop() }
        let all = DeriveBinary.runConcurrently(Array(repeating: ["migrate", "--database", url], count: 4))
        #expect(all.allSatisfy { $0.status == 0 }, "\(all.map(\.stderr))")
        #expect(all.filter { $0.stdout.contains("applied 0001_queue") }.count == 1, "\(all.map(\.stdout))")
        #expect(all.filter { $0.stdout.contains("up to date") }.count == 3)
        let sql = try PostgresConnection(url: url)
        #expect(try sql.query("SELECT count(*) FROM derive.schema_migrations").scalar == String(Migration.all.count))
    }

    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func anEditedMigrationIsRefused() throws {
        let (url, drop) = try TestQueue.createDatabase()
        defer { drop() }
        _ = try Migrator().migrate(url: url)
        var edited = Migration.all
        edited[0].sql += "\nCREATE TABLE derive.sneaky (a int);"
        #expect { try Migrator(migrations: edited).migrate(url: url) } throws: { error in
            "\(error)".contains("0001_queue was changed after it was applied")
        }
    }

    /// A migration runs in a transaction: one that fails part-way leaves nothing behind.
    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func aFailingMigrationLeavesNothingBehind() throws {
        let (url, drop) = try TestQueue.createDatabase()
        defer { drop() }
        let broken = Migration(version: 99, name: "0099_broken", sql: "CREATE TABLE derive.half (a int); SELECT 1 / 0;")
        #expect { try Migrator(migrations: Migration.all + [broken]).migrate(url: url) } throws: { error in
            "\(error)".contains("0099_broken failed") && "\(error)".contains("division by zero")
        }
        let sql = try PostgresConnection(url: url)
        #expect(try sql.query("SELECT to_regclass('derive.half')").scalar == nil)
        #expect(try sql.query("SELECT max(version) FROM derive.schema_migrations").scalar == String(Migration.all.last!.version))
    }

    @Test func sqliteFilesAreCreatedInWALModeAndRefuseWhatIsNotAQueue() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("queue.sqlite").path
        let result = try DeriveBinary.run(["migrate", "--database", "sqlite:" + path])
        #expect(result.status == 0 && result.stdout.contains("up to date"), "\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: path + "-wal") || FileManager.default.fileExists(atPath: path))

        let junk = folder.appendingPathComponent("junk.sqlite").path
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: junk))
        let refused = try DeriveBinary.run(["migrate", "--database", "sqlite:" + junk])
        #expect(refused.status != 0 && refused.stderr.contains("database_unavailable"), "\(refused.stderr)")
    }
}

/// The schema is written twice, once per dialect: `Migrations/*.sql` for PostgreSQL and
/// `SQLiteSchema` for the embedded queue. This holds them to one shape: the same tables with
/// the same columns, so a column added to one and not the other fails here, not in production.
@Suite struct SchemaParityTests {
    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func bothStoresHaveTheSameTablesAndColumns() throws {
        let postgres = try TestQueue(.postgres), sqlite = try TestQueue(.sqlite)
        let fromPostgres = try postgres.sql().query("""
            SELECT table_name || '.' || column_name FROM information_schema.columns
            WHERE table_schema = 'derive' AND table_name NOT IN (SELECT table_name FROM information_schema.views WHERE table_schema = 'derive')
            """).rows.compactMap { $0.first ?? nil }
        guard case .sqlite(let path) = try QueueLocation.parse(sqlite.location) else { throw SchemaParityFailure() }
        let fromSQLite = try SQLiteConnection(path: path).query("""
            SELECT m.name || '.' || p.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
            WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
            """).compactMap { $0.first?.string }
        let onlyPostgres = Set(fromPostgres).subtracting(fromSQLite).subtracting(Self.postgresOnly).sorted()
        let onlySQLite = Set(fromSQLite).subtracting(fromPostgres).subtracting(Self.sqliteOnly).sorted()
        #expect(onlyPostgres.isEmpty, "columns only PostgreSQL has: \(onlyPostgres)")
        #expect(onlySQLite.isEmpty, "columns only SQLite has: \(onlySQLite)")
        #expect(fromSQLite.count > 50 && fromPostgres.count > 50)
    }

    /// What one dialect keeps and the other does not need, each with its reason.
    static let postgresOnly: Set<String> = [
        // The migrator's ledger (which files ran, with their checksums); a SQLite file keeps its
        // schema version in `PRAGMA user_version`.
        "schema_migrations.version", "schema_migrations.name", "schema_migrations.checksum", "schema_migrations.applied_at",
    ]
    static let sqliteOnly: Set<String> = []
}

struct SchemaParityFailure: Error {}
