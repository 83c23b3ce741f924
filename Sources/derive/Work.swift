import ArgumentParser
import CoreMetrics
import DeriveLanguage
import DeriveJobs
import DeriveDashboard
import DeriveTerminal
import DeriveWorker
import Dispatch
import DeriveHTTP
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

struct Work: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run jobs from the queue until stopped.",
        discussion: """
        Claims jobs for its free slots, fetches each source, decodes it once at the size its \
        outputs need, writes every output to the store, and records the asset and derivative \
        rows with the job in one transaction. Wakes on PostgreSQL notifications, polls \
        otherwise. SIGTERM or SIGINT stops claiming, gives jobs in flight --grace seconds to \
        finish, releases the rest without spending an attempt and exits 0 (a second signal \
        releases at once). Logs go to standard error; metrics to --metrics-port. With \
        --until-idle on a terminal, a live line under the logs counts the jobs done, failed and \
        waiting (--quiet: none).

          derive work --database postgresql://derive@db/app --store s3://assets/derived
          derive work --until-idle        # the embedded default: SQLite and ./derived
        """
    )

    @Option(name: .customLong("queue"), help: "A queue to work (repeatable). Env: DERIVE_QUEUES (default: default).")
    var queues: [String] = []

    @Option(name: .long, help: "Jobs at once. Env: DERIVE_SLOTS (default: one per core).")
    var slots: Int?

    @Option(name: .long, help: "Seconds a claimed job is leased for; longer jobs get heartbeats. Env: DERIVE_LEASE (default 60).")
    var lease: Double?

    @Option(name: .long, help: "Seconds jobs in flight get to finish after SIGTERM. Env: DERIVE_GRACE (default 30).")
    var grace: Double?

    @Option(name: .long, help: "Seconds between claims when idle. Env: DERIVE_POLL_INTERVAL (default 1 with PostgreSQL, 0.2 with SQLite).")
    var pollInterval: Double?

    @Flag(name: .long, help: "Exit once no job is available, running or waiting to be retried in the queues (jobs submitted to run later are left).")
    var untilIdle = false

    @Option(name: .long, help: "Serve Prometheus metrics on this port at /metrics. Env: DERIVE_METRICS_PORT.")
    var metricsPort: Int?

    @Flag(name: .long, help: "Serve the dashboard's pages on the metrics port too (actions need DERIVE_DASHBOARD_TOKEN). Env: DERIVE_WORKER_DASHBOARD=1.")
    var dashboard = false

    @Option(name: .long, help: "Address for the metrics port. Env: DERIVE_METRICS_ADDRESS (default 127.0.0.1; 0.0.0.0 to be scraped from other hosts).")
    var metricsAddress: String?

    @Option(name: .long, help: "Log lines as text or json. Env: DERIVE_LOG_FORMAT (default text).")
    var logFormat: String?

    @Option(name: .long, help: "debug, info, warning or error. Env: DERIVE_LOG_LEVEL (default info).")
    var logLevel: String?

    @OptionGroup var storeOption: StoreOption
    var store: String? { storeOption.store }

    @Option(name: .long, help: "Where overlay names (l_logo) are found: a folder or a URL prefix. Env: DERIVE_OVERLAY_BASE.")
    var overlays: String?

    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var settings: SettingsOptions
    @OptionGroup var output: OutputOption
    @OptionGroup var progressOption: ProgressOption

    func run() throws {
        // From its first line SIGTERM and SIGINT stop the worker, whether they come while it
        // reads its settings, waits for the database, starts (a signal then once went unheard:
        // the database wait's watcher had left them ignored), or works.
        let stops = try waitFor { await StopRequests() }
        try reportingFailures("work") {
            var configuration = try databaseOption.configuration(settings, store: store)
            let environment = configuration.worker
            let format = LogOutput.Format(rawValue: (logFormat ?? environment.logFormat).lowercased())
            guard let format else { throw CLIError("--log-format must be text or json") }
            guard let level = Logger.Level(rawValue: (logLevel ?? environment.logLevel).lowercased()) else {
                throw CLIError("--log-level must be one of \(WorkerEnvironment.logLevels.joined(separator: ", "))")
            }
            // With --until-idle on a terminal, a live line of jobs done, failed and waiting; log
            // lines go above it.
            let live = untilIdle ? LiveWorkLine(quiet: progressOption.quiet) : nil
            let write: @Sendable (String) -> Void
            if let reporter = live?.reporter { write = { line in reporter.note(line) } } else { write = LogOutput.standardError }
            LoggingSystem.bootstrap { label in LogOutput(label: label, format: format, level: level, write: write) }
            defer { live?.stop() }
            let logger = Logger(label: "derive.worker")
            if stops.requested { return }

            var workerSettings = WorkerSettings(queues: queues.isEmpty ? environment.queues : queues)
            for queue in workerSettings.queues where !QueueName.isValid(queue) {
                throw CLIError("--queue \(queue) is not a queue name (1 to 64 of A-Z a-z 0-9 _ . -)")
            }
            workerSettings.slots = max(1, slots ?? environment.slots ?? ProcessInfo.processInfo.activeProcessorCount)
            workerSettings.lease = lease ?? environment.lease
            workerSettings.grace = grace ?? environment.grace
            workerSettings.rescueInterval = environment.rescueInterval
            workerSettings.statusInterval = min(5, environment.rescueInterval)
            if (metricsPort ?? environment.metricsPort) != nil {
                workerSettings.queueDepthInterval = 3 * workerSettings.statusInterval
            }
            workerSettings.schedulerInterval = environment.schedulerInterval > 0 ? environment.schedulerInterval : nil
            workerSettings.deleteSuperseded = environment.supersededOutputs == "delete"
            workerSettings.abandonedSweepInterval = environment.abandonedSweepInterval > 0 ? environment.abandonedSweepInterval : nil
            workerSettings.abandonedAfter = configuration.store.abandonedAfter
            workerSettings.untilIdle = untilIdle
            if case .sqlite = configuration.database {
                workerSettings.pollInterval = pollInterval ?? environment.pollInterval ?? 0.2
            } else {
                workerSettings.pollInterval = pollInterval ?? environment.pollInterval ?? 1
            }
            guard workerSettings.lease >= 3, workerSettings.grace >= 0, workerSettings.pollInterval > 0 else {
                throw CLIError("--lease must be at least 3 seconds, --grace 0 or more, --poll-interval above 0")
            }
            // Each slot decodes its own image: libvips threads are shared out among the slots.
            if configuration.engine.concurrency == 0 {
                configuration.engine.concurrency = max(1, ProcessInfo.processInfo.activeProcessorCount / workerSettings.slots)
            }
            // A malloc arena per slot: slots that share one queue for its lock (issue 13 saw one
            // worker of 16 slots at 0.87x of 16 processes); two at least, as `derive run` has.
            configuration.engine.mallocArenas = max(2, workerSettings.slots)

            guard let opened = try openDatabaseWaiting(configuration.database, logger: logger, stopRequested: { stops.requested }) else { return }
            let store = try makeStore(configuration)
            var pipeline = try makePipeline(configuration, store: store, naming: .template(configuration.store.keyTemplate),
                                            catalog: DatabasePresetCatalog(store: opened.database), overlays: overlays)
            if environment.reuse { pipeline.recordedWork = opened.database }
            let metrics = Metrics(), health = Health()
            // Libraries that report through swift-metrics' global system land on the same page.
            MetricsSystem.bootstrap(metrics.factory)
            var server: MetricsServer?
            let servesDashboard = dashboard || ProcessInfo.processInfo.environment["DERIVE_WORKER_DASHBOARD"] == "1"
            if let port = metricsPort ?? environment.metricsPort {
                let address = metricsAddress ?? environment.metricsAddress
                // The dashboard's defaults hold on the metrics port too: beyond loopback only with a token.
                let access = servesDashboard ? try DashboardOptions.access(listeningOn: address, private: false) : nil
                try access?.check(address: address, insecureOpen: false)
                let pages = access.map { DashboardServer.routes(database: opened.database, records: opened.database, store: store, access: $0,
                                                                         thumbnailer: DashboardOptions.thumbnailer(configuration.engine), logger: logger) }
                server = try waitFor { try await MetricsServer.start(address: address, port: port, metrics: metrics, health: health, more: pages, logger: logger) }
                logger.info("serving metrics", metadata: ["address": "\(address)", "port": "\(server!.port)",
                                                          "path": "/metrics, /healthz, /readyz\(servesDashboard ? " and the dashboard at /" : "")"])
            } else if servesDashboard {
                throw CLIError("--dashboard serves the pages on the metrics port: give --metrics-port (or DERIVE_METRICS_PORT) too")
            }
            logger.info("using", metadata: ["database": "\(opened.location)", "store": "\(store.description)"])
            let worker = Worker(database: opened.database, pipeline: pipeline, settings: workerSettings, notifier: opened.notifier,
                                metrics: metrics, health: health, logger: logger)
            let grace = workerSettings.grace
            live?.watch(metrics: metrics, database: opened.database, queues: workerSettings.queues)
            let summary = try waitFor { await stops.run(worker, grace: grace, logger: logger) }
            live?.stop()
            if let server { try? waitFor { await server.stop() } }
            guard let summary else {
                logger.info("stopping: asked to before the first job")
                return
            }
            if output.json {
                print(JSONWriter.compact(.object([
                    "finished": .object(summary.finished.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .int($0.value)) }),
                    "released": .int(summary.released),
                ])))
            }
        }
    }
}

/// `derive work --until-idle`'s live line: jobs done (completed), failed and retried as the
/// worker counts them, and jobs waiting in its queues (available, or retrying after a
/// backoff) as the database counts them, every half second.
final class LiveWorkLine: Sendable {
    let reporter: ProgressReporter
    private let stopped = Mutex(false)
    private let ended = DispatchSemaphore(value: 0)
    private let wake = DispatchSemaphore(value: 0)
    private let watching = Mutex(false)

    init(quiet: Bool) {
        reporter = ProgressReporter(ProgressState(label: "working", unit: "done", counts: [
            .init("failed", colour: .red), .init("retried", colour: .yellow, hiddenAtZero: true), .init("waiting", colour: .yellow),
        ]), quiet: quiet)
    }

    func watch(metrics: Metrics, database: any DeriveDatabase, queues: [String]) {
        guard reporter.shows else { return }
        watching.withLock { $0 = true }
        let thread = Thread { [self] in
            // Counted once more after the stop, so the last line has the last figures.
            while true {
                let last = stopped.withLock { $0 }
                let waiting = (try? database.counts())?.filter { queues.contains($0.queue) }
                    .reduce(0) { $0 + ($1.states[.available] ?? 0) + $1.retrying }
                reporter.update { state in
                    state.done = metrics.value(.jobs, ["outcome": Worker.RunOutcome.completed.rawValue])
                    state[count: "failed"] = metrics.value(.jobs, ["outcome": Worker.RunOutcome.failed.rawValue])
                    state[count: "retried"] = metrics.value(.jobs, ["outcome": Worker.RunOutcome.retried.rawValue])
                    if let waiting { state[count: "waiting"] = waiting }
                }
                if last { break }
                _ = wake.wait(timeout: .now() + 0.5)
            }
            ended.signal()
        }
        thread.name = "derive-live-line"
        thread.start()
    }

    /// Stops watching and leaves the last line (once).
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        if watching.withLock({ $0 }) {
            wake.signal()
            ended.wait()
        }
        reporter.finish { state, elapsed in
            let rate = elapsed > 0 ? Double(state.done) / elapsed : 0
            return "worked \(Units.seconds(elapsed)): \(state.done) done (\(Units.rate(rate))), "
                + reporter.style.paint("\(state[count: "failed"]) failed", state[count: "failed"] > 0 ? .red : nil)
                + ", \(state[count: "waiting"]) waiting"
        }
    }
}

/// The stop signals of one `derive work`, from its first line to its end. Before the worker
/// runs they are remembered (the settings, the wait for the database and the start-up look at
/// `requested`); while it runs in its service group, the first SIGTERM or SIGINT shuts the
/// group down gracefully (jobs in flight get the grace period, after which the group cancels
/// the worker) and the second cancels it at once: the worker releases its jobs.
final class StopRequests: Sendable {
    private struct State {
        var count = 0
        var group: ServiceGroup?
        var running: Task<Void, Never>?
        var logger: Logger?
    }

    /// A class around the lock, so the signal task can hold it too.
    private final class Shared: Sendable {
        let state = Mutex(State())
    }

    private let shared = Shared()

    /// Traps the signals before returning: from then on they no longer end the process.
    init() async {
        let signals = await UnixSignalsSequence(trapping: .sigterm, .sigint)
        Task { [shared] in
            for await _ in signals {
                let (count, group, running, logger) = shared.state.withLock { state in
                    state.count += 1
                    return (state.count, state.group, state.running, state.logger)
                }
                guard let group, let running else { continue }
                if count == 1 {
                    logger?.info("stopping: finishing jobs in flight (signal again to release them at once)")
                    await group.triggerGracefulShutdown()
                } else {
                    logger?.info("stopping now")
                    running.cancel()
                }
            }
        }
    }

    var requested: Bool { shared.state.withLock { $0.count > 0 } }

    /// Runs `worker` in a service group until it stops; nil when a signal came before it
    /// started (then it does not run).
    func run(_ worker: Worker, grace: Double, logger: Logger) async -> Worker.Summary? {
        // A worker that returns by itself (`--until-idle`, the queues empty) ends the group; the
        // group's default would call that a failure.
        var configuration = ServiceGroupConfiguration(services: [.init(service: worker, successTerminationBehavior: .gracefullyShutdownGroup)],
                                                      logger: logger)
        configuration.maximumGracefulShutdownDuration = .milliseconds(Int64(min(grace, 1e9) * 1000))
        let group = ServiceGroup(configuration: configuration)
        // Attached under the lock the signal handler counts under, so no signal falls between.
        let running: Task<Void, Never>? = shared.state.withLock { state in
            guard state.count == 0 else { return nil }
            state.group = group
            state.logger = logger
            state.running = Task {
                do {
                    try await group.run()
                } catch {
                    logger.error("the worker's service group failed", metadata: ["error": "\(error)"])
                }
            }
            return state.running
        }
        guard let running else { return nil }
        await running.value
        shared.state.withLock { state in
            state.group = nil
            state.running = nil
        }
        return worker.summary
    }
}

/// A worker started while its database is down or restarting waits for it, as a running worker
/// rides out an outage, instead of exiting: failures PostgreSQL calls transient (no connection,
/// "the database system is shutting down" or "starting up") are retried after 1, 2, 4... up to
/// 30 seconds, each logged. A database that refuses for good (a wrong password, a schema that
/// needs `derive migrate`) fails at once. A stop requested during the wait ends it: nil, exit 0.
func openDatabaseWaiting(_ location: QueueLocation, logger: Logger, stopRequested: () -> Bool) throws -> OpenedDatabase? {
    var delay = 1.0
    while true {
        do {
            return try openDatabase(location, role: "derive-worker")
        } catch let error as DeriveError where error.code == .databaseUnavailable && error.isRetryable {
            logger.warning("waiting for the database", metadata: ["error": "\(error.detail)", "retry_in": "\(Int(delay))s"])
        }
        let until = Date().addingTimeInterval(delay)
        while Date() < until {
            if stopRequested() {
                logger.info("stopping: the database never answered")
                return nil
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        delay = min(30, delay * 2)
    }
}

/// Waits on this (non-concurrency) thread for async work: `derive work`'s main thread, which
/// the worker's own threads leave free, bridging to the metrics server on Swift's pool.
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = WaitedFor<T>()
    Task {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        outcome.value.withLock { $0 = result }
        outcome.done.signal()
    }
    outcome.done.wait()
    return try outcome.value.withLock { $0! }.get()
}

private final class WaitedFor<T: Sendable>: Sendable {
    let value = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
}
