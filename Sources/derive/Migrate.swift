import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveSQLite
import Foundation

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create or upgrade the queue's tables.",
        discussion: """
        PostgreSQL: applies the numbered migrations (Migrations/*.sql, built into derive) that \
        the database lacks, each in a transaction, recorded in derive.schema_migrations. Safe to \
        run from several machines at once, and again at every deploy.

        SQLite: creates or upgrades the file (workers also do this when they open it).

          derive migrate --database postgresql://derive@db.internal/app
          DERIVE_DATABASE_URL=sqlite:/var/lib/derive/queue.sqlite derive migrate
        """
    )

    @Option(name: .long, help: "postgres:// URL or sqlite:PATH (default: DERIVE_DATABASE_URL, else sqlite:derive.sqlite).")
    var database: String?

    func run() throws {
        try reportingFailures("migrate") {
            let location = try database.map { try QueueLocation.parse($0) }
                ?? QueueLocation.from(environment: ProcessInfo.processInfo.environment)
            switch location {
            case .postgres(let url):
                let report = try Migrator().migrate(url: url)
                if report.applied.isEmpty {
                    print("\(location): up to date at version \(report.version)")
                } else {
                    print("\(location): applied \(report.applied.joined(separator: ", ")); now at version \(report.version)")
                }
            case .sqlite(let path):
                _ = try SQLiteJobStore(path: path)
                print("\(location): up to date")
            }
        }
    }
}
