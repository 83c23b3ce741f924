import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveCurl
import DerivePostgres
import DeriveSQLite
import DeriveVips
import DeriveVision
import DeriveWorker
import Foundation

/// `--database`, for every command that reads or writes the queue.
/// `--store`, as every command that reads or writes the asset store takes it.
struct StoreOption: ParsableArguments {
    @Option(name: .long, help: "The asset store: a folder, file:///path or s3://bucket/prefix. Env: DERIVE_STORE (default ./derived).")
    var store: String?
}

struct DatabaseOption: ParsableArguments {
    @Option(name: .long, help: "The queue: a postgres:// URL or sqlite:PATH. Env: DERIVE_DATABASE_URL (default: sqlite:derive.sqlite).")
    var database: String?

    /// The configuration with this flag applied over the environment.
    func configuration(_ settings: SettingsOptions? = nil, store: String? = nil) throws -> Configuration {
        var environment = ProcessInfo.processInfo.environment
        if let database { environment["DERIVE_DATABASE_URL"] = database }
        settings?.apply(to: &environment)
        if let store { environment["DERIVE_STORE"] = store }
        return try Configuration.load(environment)
    }
}

/// `--json`, for every command that prints results.
struct OutputOption: ParsableArguments {
    @Flag(name: .long, help: "Print JSON instead of text.")
    var json = false
}

/// The queue's database, opened for a command.
struct OpenedDatabase {
    let database: any DeriveDatabase
    /// PostgreSQL's notifications; SQLite has none.
    let notifier: (any WorkNotifier)?
    let location: QueueLocation
}

/// Opens the queue. A PostgreSQL database must have been migrated (`derive migrate`); an
/// SQLite file is created or upgraded on the spot. `role` names the connections in
/// `pg_stat_activity` (`derive-worker` for workers).
func openDatabase(_ location: QueueLocation, role: String = "derive") throws -> OpenedDatabase {
    switch location {
    case .postgres(let url):
        try Migrator().check(url: url)
        return OpenedDatabase(database: PostgresJobStore(url: url, applicationName: role), notifier: PostgresWorkNotifier(url: url),
                              location: location)
    case .sqlite(let path):
        return OpenedDatabase(database: try SQLiteJobStore(path: path), notifier: nil, location: location)
    }
}

/// The fetcher the configuration describes, with its disk cache.
func makeFetcher(_ configuration: Configuration) throws -> CurlFetcher {
    let cache = try configuration.cache.map { try DiskSourceCache(directory: $0.directory, capacity: $0.maxBytes) }
    return try CurlFetcher(settings: configuration.fetch, cache: cache)
}

/// Everything a job runs through, as the configuration describes it.
func makePipeline(_ configuration: Configuration, store: any AssetStore, naming: JobPipeline.OutputNaming, catalog: any PresetCatalog,
                  overlays: String? = nil, localFiles: Bool = false) throws -> JobPipeline {
    let fetcher = try makeFetcher(configuration)
    let overlayBase = overlays ?? configuration.overlayBase
    let overlayLoader: any OverlayLoader
    switch overlayBase {
    case let base? where base.contains("://"): overlayLoader = FetchingOverlayLoader(fetcher: fetcher, base: base)
    case let folder?: overlayLoader = FileOverlayLoader(root: URL(fileURLWithPath: folder), maxBytes: configuration.engine.sourceLimits.maxInputBytes)
    case nil: overlayLoader = NoOverlays()
    }
    let limits = ChainLimits.default
    let engine = try VipsEngine(settings: configuration.engine, limits: limits, faceDetector: FaceDetectors.make(configuration.engine.faces.detector, canvas: configuration.engine.faces.canvas))
    let sourceFetcher: any SourceFetcher = localFiles
        ? LocalFirstFetcher(fetcher: fetcher, maxBytes: configuration.engine.sourceLimits.maxInputBytes) : fetcher
    return JobPipeline(engine: engine, planner: engine.planner, fetcher: sourceFetcher, overlays: overlayLoader, store: store, naming: naming,
                       catalog: catalog, limits: limits)
}

func makeStore(_ configuration: Configuration) throws -> any AssetStore {
    try Stores.make(configuration.store, s3: configuration.fetch.s3)
}
