import ArgumentParser
import DeriveLanguage
import DeriveJobs
import Foundation

struct HealthCheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Check that the database (migrated) and the store answer; exit 0 if both do, 1 if not.",
        discussion: """
        What a container's health check or a deploy script runs, with the worker's settings (the \
        same DERIVE_* environment). A running worker also answers /healthz and /readyz on its \
        metrics port without opening connections.

          derive health
          derive health --json
        """
    )

    @OptionGroup var storeOption: StoreOption
    var store: String? { storeOption.store }

    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var output: OutputOption

    func run() throws {
        var checks: [(name: String, ok: Bool, detail: String, milliseconds: Double)] = []
        func check(_ name: String, _ body: () throws -> String) {
            let start = DispatchTime.now().uptimeNanoseconds
            do {
                let detail = try body()
                checks.append((name, true, detail, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6))
            } catch {
                checks.append((name, false, "\(error)", Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6))
            }
        }
        var configuration: Configuration?
        check("configuration") {
            configuration = try databaseOption.configuration(store: store)
            return "ok"
        }
        if let configuration {
            check("database") {
                let opened = try openDatabase(configuration.database)
                try opened.database.ping()
                return "\(opened.location)"
            }
            check("store") {
                let assets = try makeStore(configuration)
                _ = try assets.get(try StorageKey("derive-health/probe"))
                return assets.description
            }
        }
        let healthy = checks.allSatisfy(\.ok)
        if output.json {
            print(JSONWriter.compact(.object([JSONMember(key: "healthy", value: .bool(healthy))] + checks.map { check in
                JSONMember(key: check.name, value: .object(["ok": .bool(check.ok), "detail": .string(check.detail),
                                                            "ms": .decimal((check.milliseconds * 10).rounded() / 10)]))
            })))
        } else {
            for check in checks {
                print("\(check.name): \(check.ok ? "ok" : "FAILED") — \(check.detail) (\(Int(check.milliseconds.rounded())) ms)")
            }
        }
        if !healthy { throw ExitCode.failure }
    }
}
