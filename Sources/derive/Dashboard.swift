import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveDashboard
import Foundation
import Logging
import UnixSignals

struct Dashboard: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the operator's pages: the queue, the workers, jobs, failures, assets, presets and schedules; act with DERIVE_DASHBOARD_TOKEN.",
        discussion: """
            Listens on 127.0.0.1 unless told otherwise (--address 0.0.0.0 to listen everywhere, behind \
            something that authenticates). Reads through the same seams as `derive status` and `derive jobs`, \
            on PostgreSQL or the embedded SQLite queue. Without DERIVE_DASHBOARD_TOKEN it is read-only; with it, \
            a browser logs in with the token (or a script sends Authorization: Bearer) to retry, cancel and reprocess. \
            Stops on SIGTERM or SIGINT.
            """
    )

    @Option(name: .long, help: "The address to listen on. Env: DERIVE_DASHBOARD_ADDRESS (default 127.0.0.1).")
    var address: String?

    @Option(name: .long, help: "The port. Env: DERIVE_DASHBOARD_PORT (default 8080; 0 picks a free one).")
    var port: Int?

    @OptionGroup var storeOption: StoreOption
    var store: String? { storeOption.store }

    @OptionGroup var databaseOption: DatabaseOption

    func run() throws {
        try reportingFailures("dashboard") {
            let environment = ProcessInfo.processInfo.environment
            let address = address ?? environment["DERIVE_DASHBOARD_ADDRESS"] ?? "127.0.0.1"
            guard let port = port ?? (environment["DERIVE_DASHBOARD_PORT"].map { Int($0) } ?? 8080) else {
                throw CLIError("DERIVE_DASHBOARD_PORT must be a port number")
            }
            let configuration = try databaseOption.configuration(store: store)
            let database = try openDatabase(configuration.database).database
            let assets = try makeStore(configuration)
            // SIGTERM and SIGINT stop the server instead of the process dying at once.
            let signals = try waitFor { await UnixSignalsSequence(trapping: .sigterm, .sigint) }
            let access = DashboardAccess(token: environment["DERIVE_DASHBOARD_TOKEN"])
            let server = try waitFor { try await DashboardServer.start(database: database, records: database, store: assets, access: access, address: address, port: port) }
            // The first line of its log says where it listens (port 0 picks one): scripts and tests read it.
            let line = "derive dashboard listening on http://\(address.contains(":") ? "[\(address)]" : address):\(server.port)/"
                + (access.canAct ? " (actions need the token)\n" : " (read-only: no DERIVE_DASHBOARD_TOKEN)\n")
            FileHandle.standardError.write(Data(line.utf8))
            try waitFor { for await _ in signals { break } }
            try? waitFor { await server.stop() }
        }
    }
}
