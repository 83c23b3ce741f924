import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// Every metric Derive exports: its name, type, label names and help text, in one place.
/// Dashboards and alerts depend on these names and labels: change them only on purpose.
public enum MetricName: String, CaseIterable, Sendable {
    case jobs = "derive_jobs_total"
    case stageSeconds = "derive_stage_seconds"
    case jobSeconds = "derive_job_seconds"
    case outputs = "derive_outputs_total"
    case queueDepth = "derive_queue_depth"
    case oldestAvailableSeconds = "derive_oldest_available_seconds"
    case queuePaused = "derive_queue_paused"
    case fetchBytes = "derive_fetch_bytes_total"
    case fetches = "derive_fetch_total"
    case slots = "derive_slots"
    case slotsBusy = "derive_slots_busy"
    case databaseErrors = "derive_database_errors_total"
    case scheduleFires = "derive_schedule_fires_total"
    case supersededDeleted = "derive_superseded_deleted_total"
    case abandonedWritesRemoved = "derive_abandoned_writes_removed_total"
    case unrecordedWritesRemoved = "derive_unrecorded_writes_removed_total"

    public enum Kind: Sendable { case counter, gauge, histogram }

    public var kind: Kind {
        switch self {
        case .stageSeconds, .jobSeconds: .histogram
        case .queueDepth, .oldestAvailableSeconds, .queuePaused, .slots, .slotsBusy: .gauge
        default: .counter
        }
    }

    /// The label names every series of the metric carries, sorted: always the same set.
    public var labels: [String] {
        switch self {
        case .jobs, .outputs: ["outcome"]
        case .stageSeconds: ["stage"]
        case .queueDepth: ["queue", "state"]
        case .oldestAvailableSeconds, .queuePaused: ["queue"]
        case .fetches: ["origin"]
        case .scheduleFires: ["schedule"]
        default: []
        }
    }

    public var help: String {
        switch self {
        case .jobs: "Jobs this worker finished, by outcome (completed, retried, failed, cancelled, stale, released)."
        case .stageSeconds: "Time per job stage: fetch, header, plan, decode, metadata, apply, encode, store."
        case .jobSeconds: "Time per job, from claim to stored outputs."
        case .outputs: "Outputs of completed jobs: derived, or reused from an earlier run's record (DERIVE_REUSE)."
        case .queueDepth: "Jobs in the queue by queue and state, as last read."
        case .oldestAvailableSeconds: "Age of the oldest available job, by queue."
        case .queuePaused: "1 for each paused queue (no worker claims from it until it is resumed), as last read."
        case .fetchBytes: "Source bytes transferred over the network."
        case .fetches: "Source fetches by how they were served: network, cache, revalidated, file, data."
        case .slots: "Job slots."
        case .slotsBusy: "Job slots running a job."
        case .databaseErrors: "Calls to the database that failed."
        case .scheduleFires: "Schedule fires this worker added, by schedule."
        case .supersededDeleted: "Superseded outputs this worker deleted (DERIVE_SUPERSEDED_OUTPUTS=delete)."
        case .abandonedWritesRemoved: "Temporary files and multipart uploads of interrupted writes this worker removed from the store."
        case .unrecordedWritesRemoved: "Objects runs wrote and never recorded (the write ledger's leftovers) this worker removed from the store."
        }
    }

    var descriptor: MetricNameDescriptor { MetricNameDescriptor(metricName: rawValue, unitName: "", helpText: help) }
}

/// One worker's metrics: recorded through swift-metrics (`Counter`, `Gauge`, `Recorder`) into
/// a swift-prometheus registry of its own, which `/metrics` renders. Each `Metrics` has its own
/// registry and factory, so a test's worker is measured on its own; `derive work` also hands
/// the factory to `MetricsSystem.bootstrap`, so libraries that report through swift-metrics
/// land on the same page.
public final class Metrics: Sendable {
    /// Stage durations, in seconds: from a cache hit to a large AVIF encode.
    public static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    public let registry: PrometheusCollectorRegistry
    /// The swift-metrics factory over `registry`: the one way metrics are created.
    public let factory: DeriveMetricsFactory

    private struct Series: Hashable {
        var name: MetricName
        var labels: [String]
    }

    private struct State {
        /// Counter totals, for `value` (Prometheus' counters cannot be read back).
        var totals: [Series: Int] = [:]
        /// The series `replace` set last, by metric, so that it can drop the ones now gone.
        var replaced: [MetricName: Set<[String]>] = [:]
    }

    private let state = Mutex(State())

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        factory = DeriveMetricsFactory(registry: registry)
        // Series without labels exist from the start, at zero: a rate over them is 0, not empty.
        for name in MetricName.allCases where name.labels.isEmpty {
            switch name.kind {
            case .counter: _ = CoreMetrics.Counter(label: name.rawValue, factory: factory)
            case .gauge: _ = CoreMetrics.Gauge(label: name.rawValue, factory: factory)
            case .histogram: _ = CoreMetrics.Recorder(label: name.rawValue, aggregate: true, factory: factory)
            }
        }
    }

    public func increment(_ name: MetricName, _ labels: [String: String] = [:], by value: Int = 1) {
        guard value > 0 else { return }
        let values = Self.values(of: name, labels)
        CoreMetrics.Counter(label: name.rawValue, dimensions: Self.dimensions(name, values), factory: factory).increment(by: value)
        state.withLock { $0.totals[Series(name: name, labels: values), default: 0] += value }
    }

    public func set(_ name: MetricName, _ labels: [String: String] = [:], to value: Double) {
        CoreMetrics.Gauge(label: name.rawValue, dimensions: Self.dimensions(name, Self.values(of: name, labels)), factory: factory)
            .record(value)
    }

    /// Replaces every series of a gauge (the queue depth: queues and states come and go).
    public func replace(_ name: MetricName, with values: [([String: String], Double)]) {
        state.withLock { state in
            let now = values.map { (Self.values(of: name, $0.0), $0.1) }
            let gone = (state.replaced[name] ?? []).subtracting(now.map(\.0))
            for series in gone {
                CoreMetrics.Gauge(label: name.rawValue, dimensions: Self.dimensions(name, series), factory: factory).destroy()
            }
            for (series, value) in now {
                CoreMetrics.Gauge(label: name.rawValue, dimensions: Self.dimensions(name, series), factory: factory).record(value)
            }
            state.replaced[name] = Set(now.map(\.0))
        }
    }

    public func observe(_ name: MetricName, _ labels: [String: String] = [:], seconds: Double) {
        CoreMetrics.Recorder(label: name.rawValue, dimensions: Self.dimensions(name, Self.values(of: name, labels)),
                             aggregate: true, factory: factory).record(seconds)
    }

    /// A counter's total (for tests and the worker's summary).
    public func value(_ name: MetricName, _ labels: [String: String] = [:]) -> Int {
        state.withLock { $0.totals[Series(name: name, labels: Self.values(of: name, labels))] ?? 0 }
    }

    /// Everything, in the Prometheus text exposition format (version 0.0.4).
    public func render() -> String {
        registry.emitToString()
    }

    /// The values of the metric's labels, in the order of its label names: a label the caller
    /// left out is "unknown" and one the metric does not have is dropped, so a series always
    /// carries the same label names (a registry refuses a name with two label sets).
    private static func values(of name: MetricName, _ labels: [String: String]) -> [String] {
        name.labels.map { labels[$0] ?? "unknown" }
    }

    private static func dimensions(_ name: MetricName, _ values: [String]) -> [(String, String)] {
        Array(zip(name.labels, values))
    }
}
