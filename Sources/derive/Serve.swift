import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveServe
import DeriveWorker
import Foundation
import Logging

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve Cloudinary's upload API and delivery URLs over Derive's queue and store (see Docs/serve.md).",
        discussion: """
            POST /v1_1/<cloud>/image/upload takes signed uploads (DERIVE_API_KEY and DERIVE_API_SECRET, or \
            DERIVE_API_KEYS=key:secret,key:secret) and unsigned ones with a preset marked unsigned; eager \
            transformations become jobs. GET /<cloud>/image/upload/[<transformation>/][v<version>/]<public_id>.<ext> \
            delivers the original or a recorded derivative, and derives a new one only for a signed URL (s--...--). \
            GET /v1_1/<cloud>/resources/image/upload/<public_id> reads an asset (basic auth). On the embedded SQLite \
            queue it also works the queue in this process (--no-work to leave that to `derive work`). Listens on \
            127.0.0.1 unless told otherwise; stops on SIGTERM or SIGINT.

              DERIVE_CLOUD_NAME=demo DERIVE_API_KEY=1234 DERIVE_API_SECRET=s3cret \\
                  derive serve --port 8090
            """
    )

    @Option(name: .long, help: "The address to listen on. Env: DERIVE_SERVE_ADDRESS (default 127.0.0.1).")
    var address: String?

    @Option(name: .long, help: "The port. Env: DERIVE_SERVE_PORT (default 8090; 0 picks a free one).")
    var port: Int?

    @Option(name: .long, help: "Upload presets: a JSON file of {name: {unsigned, folder, tags, eager, ...}}. Env: DERIVE_UPLOAD_PRESETS (the JSON itself).")
    var uploadPresets: String?

    @Option(name: .long, help: "The largest upload in bytes. Env: DERIVE_SERVE_MAX_BYTES (default: DERIVE_MAX_INPUT_BYTES).")
    var maxBytes: Int?

    @Option(name: .long, help: "Seconds an upload waits for its eager outputs, or a signed URL for its derivative. Env: DERIVE_SERVE_WAIT (default 60).")
    var wait: Double?

    @Option(name: .long, help: "The base of delivery URLs in responses (https://img.example.com). Env: DERIVE_SERVE_URL (default: http://<Host>).")
    var deliveryURL: String?

    @Option(name: .long, help: "A transformation unsigned delivery URLs may have derived (repeatable; t_NAME for a preset). Env: DERIVE_SERVE_ALLOWED_TRANSFORMATIONS, |-separated.")
    var allowTransformation: [String] = []

    @Option(name: .long, help: "How delivery sends a stored object: stream (through derive serve) or presigned (302 to a presigned S3 URL; S3 stores only). Env: DERIVE_SERVE_REDIRECT (default stream); DERIVE_SERVE_REDIRECT_SECONDS the URL's life (default 300).")
    var redirect: String?

    @Flag(name: .long, inversion: .prefixedNo, help: "Work the queue in this process too (default: on with SQLite, off with PostgreSQL).")
    var work: Bool?

    @Option(name: .long, help: "Jobs at once when working the queue. Env: DERIVE_SLOTS (default: one per core).")
    var slots: Int?

    @OptionGroup var storeOption: StoreOption
    var store: String? { storeOption.store }

    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var settingsOptions: SettingsOptions

    func run() throws {
        let stops = try waitFor { await StopRequests() }
        try reportingFailures("serve") {
            let environment = ProcessInfo.processInfo.environment
            var configuration = try databaseOption.configuration(settingsOptions, store: store)
            let level = Logger.Level(rawValue: configuration.worker.logLevel.lowercased()) ?? .info
            let format = LogOutput.Format(rawValue: configuration.worker.logFormat.lowercased()) ?? .text
            LoggingSystem.bootstrap { label in LogOutput(label: label, format: format, level: level) }
            let logger = Logger(label: "derive.serve")

            let address = address ?? environment["DERIVE_SERVE_ADDRESS"] ?? "127.0.0.1"
            guard let port = port ?? (environment["DERIVE_SERVE_PORT"].map { Int($0) } ?? 8090) else {
                throw CLIError("DERIVE_SERVE_PORT must be a port number")
            }
            guard let cloud = environment["DERIVE_CLOUD_NAME"], !cloud.isEmpty,
                  cloud.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-".contains($0)) }) else {
                throw CLIError("set DERIVE_CLOUD_NAME to the cloud name clients use (letters, digits, _ and -)")
            }
            let credentials: [String: String]
            do {
                credentials = try ServeSettings.credentials(key: environment["DERIVE_API_KEY"], secret: environment["DERIVE_API_SECRET"],
                                                            pairs: environment["DERIVE_API_KEYS"])
            } catch let error as ServeError { throw CLIError(error.message) }
            guard !credentials.isEmpty else { throw CLIError("set DERIVE_API_KEY and DERIVE_API_SECRET (or DERIVE_API_KEYS=key:secret,...)") }
            var presets: [String: UploadPreset] = [:]
            if let text = try uploadPresets.map(readFile) ?? environment["DERIVE_UPLOAD_PRESETS"] {
                do { presets = try UploadPreset.parse(text) } catch let error as ServeError { throw CLIError(error.message) }
            }
            let waitSeconds = wait ?? environment["DERIVE_SERVE_WAIT"].flatMap(Double.init) ?? 60
            let limit = maxBytes ?? environment["DERIVE_SERVE_MAX_BYTES"].flatMap(Int.init) ?? configuration.engine.sourceLimits.maxInputBytes
            guard waitSeconds >= 0, waitSeconds <= 3600, limit > 0 else { throw CLIError("--wait must be 0 to 3600 seconds and --max-bytes above 0") }
            var settings = ServeSettings(cloudName: cloud, credentials: credentials, presets: presets, maxUploadBytes: limit, wait: waitSeconds,
                                         deliveryBase: deliveryURL ?? environment["DERIVE_SERVE_URL"])
            let allowed = allowTransformation + (environment["DERIVE_SERVE_ALLOWED_TRANSFORMATIONS"] ?? "").split(separator: "|").map(String.init)
            settings.allowedTransformations = Set(allowed.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
            settings.autoFormats = configuration.engine.autoFormats
            if let text = environment["DERIVE_SERVE_CACHE_BYTES"] {
                guard let bytes = Int(text), bytes >= 0 else { throw CLIError("DERIVE_SERVE_CACHE_BYTES must be a number of bytes (0: keep none), got \(text)") }
                settings.cacheBytes = bytes
            }
            settings.fetchDomains = Set((environment["DERIVE_SERVE_FETCH_DOMAINS"] ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
            if let text = environment["DERIVE_SERVE_ADMIN_RATE_LIMIT"] {
                guard let calls = Int(text), calls > 0 else { throw CLIError("DERIVE_SERVE_ADMIN_RATE_LIMIT must be a number of calls an hour above 0, got \(text)") }
                settings.adminRateLimit = calls
            }

            let opened = try openDatabase(configuration.database)
            let assets = try makeStore(configuration)
            switch (redirect ?? environment["DERIVE_SERVE_REDIRECT"] ?? "stream").lowercased() {
            case "stream": break
            case "presigned":
                guard assets.temporaryURLOrigin != nil else {
                    throw CLIError("DERIVE_SERVE_REDIRECT=presigned needs an S3 store (DERIVE_STORE=s3://...): \(assets.description) has no presigned URLs")
                }
                let text = environment["DERIVE_SERVE_REDIRECT_SECONDS"] ?? "300"
                guard let seconds = Int(text), (10...604_800).contains(seconds) else {
                    throw CLIError("DERIVE_SERVE_REDIRECT_SECONDS must be 10 to 604800 seconds, got \(text)")
                }
                settings.presignedRedirectSeconds = seconds
            case let other: throw CLIError("DERIVE_SERVE_REDIRECT must be stream or presigned, got \(other)")
            }
            let fetcher = try makeFetcher(configuration)
            let service = CloudinaryService(settings: settings, database: opened.database, store: assets, fetcher: fetcher, webhooks: fetcher,
                                            logger: logger)
            let server = try waitFor { try await ServeServer.start(service: service, address: address, port: port, logger: logger) }
            // The first line says where it listens (port 0 picks one): scripts and tests read it.
            let working: Bool
            if case .sqlite = configuration.database { working = work ?? true } else { working = work ?? false }
            printError("derive serve listening on http://\(address.contains(":") ? "[\(address)]" : address):\(server.port)/ (cloud \(cloud)"
                + (working ? ", working the queue)" : ")"))

            if working {
                var workerSettings = WorkerSettings(queues: [settings.queue])
                workerSettings.slots = max(1, slots ?? configuration.worker.slots ?? ProcessInfo.processInfo.activeProcessorCount)
                workerSettings.lease = configuration.worker.lease
                workerSettings.grace = configuration.worker.grace
                workerSettings.pollInterval = configuration.worker.pollInterval ?? 0.05
                if configuration.engine.concurrency == 0 {
                    configuration.engine.concurrency = max(1, ProcessInfo.processInfo.activeProcessorCount / workerSettings.slots)
                }
                var pipeline = try makePipeline(configuration, store: assets, naming: .template(configuration.store.keyTemplate),
                                                catalog: DatabasePresetCatalog(store: opened.database))
                if configuration.worker.reuse { pipeline.recordedWork = opened.database }
                let worker = Worker(database: opened.database, pipeline: pipeline, settings: workerSettings, notifier: opened.notifier,
                                    logger: Logger(label: "derive.worker"))
                service.whenQueueing { worker.wake() }
                let grace = workerSettings.grace
                _ = try waitFor { await stops.run(worker, grace: grace, logger: logger) }
            } else {
                while !stops.requested { Thread.sleep(forTimeInterval: 0.1) }
            }
            try? waitFor { await server.stop() }
        }
    }
}
