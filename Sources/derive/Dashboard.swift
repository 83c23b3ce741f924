import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveDashboard
import DeriveVips
import Foundation
import Logging
import UnixSignals

struct Dashboard: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the operator's pages: the queue, the workers, jobs, failures, assets, presets and schedules; act with DERIVE_DASHBOARD_TOKEN.",
        discussion: """
            Listens on 127.0.0.1 unless told otherwise; beyond loopback only with DERIVE_DASHBOARD_TOKEN \
            (at least 16 characters) or --insecure-open. Reads through the same seams as `derive status` and \
            `derive jobs`, on PostgreSQL or the embedded SQLite queue. Without a token it is read-only; with it, \
            a browser logs in with the token (or a script sends Authorization: Bearer) to retry, cancel and reprocess, \
            and --private (DERIVE_DASHBOARD_PRIVATE=1) asks the login for reading too. Stops on SIGTERM or SIGINT.
            """
    )

    @Option(name: .long, help: "The address to listen on. Env: DERIVE_DASHBOARD_ADDRESS (default 127.0.0.1).")
    var address: String?

    @Option(name: .long, help: "The port. Env: DERIVE_DASHBOARD_PORT (default 8080; 0 picks a free one).")
    var port: Int?

    @Flag(name: .long, help: "Serve beyond loopback without a token (only behind something that authenticates).")
    var insecureOpen = false

    @Flag(name: .customLong("private"), help: "With a token, pages need the login too, not only actions. Env: DERIVE_DASHBOARD_PRIVATE=1.")
    var privatePages = false

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
            let access = try DashboardOptions.access(listeningOn: address, private: privatePages)
            try access.check(address: address, insecureOpen: insecureOpen)
            if insecureOpen && !access.canAct {
                FileHandle.standardError.write(Data("derive dashboard: --insecure-open: every page is served to whoever reaches \(address) (read-only: no token)\n".utf8))
            }
            let server = try waitFor { try await DashboardServer.start(database: database, records: database, store: assets, access: access, address: address, port: port, insecureOpen: insecureOpen,
                                                                        thumbnailer: DashboardOptions.thumbnailer(configuration.engine)) }
            // The first line of its log says where it listens (port 0 picks one): scripts and tests read it.
            let line = "derive dashboard listening on http://\(address.contains(":") ? "[\(address)]" : address):\(server.port)/"
                + (access.canAct ? " (actions need the token)\n" : " (read-only: no DERIVE_DASHBOARD_TOKEN)\n")
            FileHandle.standardError.write(Data(line.utf8))
            try waitFor { for await _ in signals { break } }
            try? waitFor { await server.stop() }
        }
    }
}

/// The dashboard's access settings from the environment, shared by `derive dashboard` and
/// `derive work --dashboard`.
enum DashboardOptions {
    /// libvips' thumbnail, for the asset pages' small pictures (the dashboard module has no
    /// image library of its own).
    static func thumbnailer(_ settings: EngineSettings) -> DashboardThumbnailer {
        DashboardThumbnailer { bytes, width, height in
            (try Thumbnails.webp(bytes, width: width, height: height, settings: settings), "image/webp")
        }
    }

    static func access(listeningOn address: String, private flag: Bool) throws -> DashboardAccess {
        let environment = ProcessInfo.processInfo.environment
        let hosts = (environment["DERIVE_DASHBOARD_HOSTS"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        return DashboardAccess(token: environment["DERIVE_DASHBOARD_TOKEN"],
                               privatePages: flag || environment["DERIVE_DASHBOARD_PRIVATE"] == "1",
                               allowedHosts: DashboardAccess.hosts(listeningOn: address, configured: hosts),
                               trustProxy: environment["DERIVE_DASHBOARD_TRUST_PROXY"] == "1")
    }
}
