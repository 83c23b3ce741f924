import Foundation
import Synchronization

/// The worker's counters, gauges and histograms, rendered in Prometheus' text format.
public final class Metrics: Sendable {
    /// Stage durations, in seconds: from a cache hit to a large AVIF encode.
    public static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

    private struct Series: Hashable {
        var name: String
        var labels: [String: String]
    }

    private struct Histogram {
        var counts: [Int]
        var sum: Double = 0
        var count = 0
    }

    private struct State {
        var counters: [Series: Double] = [:]
        var gauges: [Series: Double] = [:]
        var histograms: [Series: Histogram] = [:]
    }

    private let state = Mutex(State())
    private let help: [String: (type: String, text: String)] = [
        "derive_jobs_total": ("counter", "Jobs this worker finished, by outcome (completed, retried, failed, cancelled, stale, released)."),
        "derive_stage_seconds": ("histogram", "Time per job stage: fetch, header, plan, decode, metadata, apply, encode, store."),
        "derive_job_seconds": ("histogram", "Time per job, from claim to stored outputs."),
        "derive_outputs_total": ("counter", "Outputs of completed jobs: derived, or reused from an earlier run's record (DERIVE_REUSE)."),
        "derive_queue_depth": ("gauge", "Jobs in the queue by queue and state, as last read."),
        "derive_oldest_available_seconds": ("gauge", "Age of the oldest available job, by queue."),
        "derive_fetch_bytes_total": ("counter", "Source bytes transferred over the network."),
        "derive_fetch_total": ("counter", "Source fetches by how they were served: network, cache, revalidated, file, data."),
        "derive_slots": ("gauge", "Job slots."),
        "derive_slots_busy": ("gauge", "Job slots running a job."),
        "derive_database_errors_total": ("counter", "Calls to the database that failed."),
        "derive_schedule_fires_total": ("counter", "Schedule fires this worker added, by schedule."),
        "derive_superseded_deleted_total": ("counter", "Superseded outputs this worker deleted (DERIVE_SUPERSEDED_OUTPUTS=delete)."),
        "derive_abandoned_writes_removed_total": ("counter", "Temporary files and multipart uploads of interrupted writes this worker removed from the store."),
        "derive_unrecorded_writes_removed_total": ("counter", "Objects runs wrote and never recorded (the write ledger's leftovers) this worker removed from the store."),
    ]

    public init() {}

    public func increment(_ name: String, _ labels: [String: String] = [:], by value: Double = 1) {
        state.withLock { $0.counters[Series(name: name, labels: labels), default: 0] += value }
    }

    public func set(_ name: String, _ labels: [String: String] = [:], to value: Double) {
        state.withLock { $0.gauges[Series(name: name, labels: labels)] = value }
    }

    /// Replaces every series of a gauge (the queue depth: queues and states come and go).
    public func replace(_ name: String, with values: [([String: String], Double)]) {
        state.withLock { state in
            state.gauges = state.gauges.filter { $0.key.name != name }
            for (labels, value) in values { state.gauges[Series(name: name, labels: labels)] = value }
        }
    }

    public func observe(_ name: String, _ labels: [String: String] = [:], seconds: Double) {
        state.withLock { state in
            let series = Series(name: name, labels: labels)
            var histogram = state.histograms[series] ?? Histogram(counts: Array(repeating: 0, count: Self.buckets.count))
            for (index, bound) in Self.buckets.enumerated() where seconds <= bound { histogram.counts[index] += 1 }
            histogram.sum += seconds
            histogram.count += 1
            state.histograms[series] = histogram
        }
    }

    /// A counter's value (for tests and the status line).
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double {
        state.withLock { $0.counters[Series(name: name, labels: labels)] ?? $0.gauges[Series(name: name, labels: labels)] ?? 0 }
    }

    /// Everything, in the Prometheus text exposition format (version 0.0.4).
    public func render() -> String {
        let snapshot = state.withLock { $0 }
        var lines: [String] = []
        let names = Set(snapshot.counters.keys.map(\.name)).union(snapshot.gauges.keys.map(\.name))
            .union(snapshot.histograms.keys.map(\.name)).sorted()
        for name in names {
            if let (type, text) = help[name] {
                lines.append("# HELP \(name) \(text)")
                lines.append("# TYPE \(name) \(type)")
            }
            for (series, value) in snapshot.counters.filter({ $0.key.name == name }).sorted(by: { Self.order($0.key.labels, $1.key.labels) }) {
                lines.append("\(name)\(Self.format(series.labels)) \(Self.number(value))")
            }
            for (series, value) in snapshot.gauges.filter({ $0.key.name == name }).sorted(by: { Self.order($0.key.labels, $1.key.labels) }) {
                lines.append("\(name)\(Self.format(series.labels)) \(Self.number(value))")
            }
            for (series, histogram) in snapshot.histograms.filter({ $0.key.name == name })
                .sorted(by: { Self.order($0.key.labels, $1.key.labels) }) {
                for (index, bound) in Self.buckets.enumerated() {
                    lines.append("\(name)_bucket\(Self.format(series.labels, le: Self.number(bound))) \(histogram.counts[index])")
                }
                lines.append("\(name)_bucket\(Self.format(series.labels, le: "+Inf")) \(histogram.count)")
                lines.append("\(name)_sum\(Self.format(series.labels)) \(Self.number(histogram.sum))")
                lines.append("\(name)_count\(Self.format(series.labels)) \(histogram.count)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func order(_ a: [String: String], _ b: [String: String]) -> Bool {
        format(a) < format(b)
    }

    static func format(_ labels: [String: String], le: String? = nil) -> String {
        var pairs = labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(escape($0.value))\"" }
        if let le { pairs.append("le=\"\(le)\"") }
        return pairs.isEmpty ? "" : "{" + pairs.joined(separator: ",") + "}"
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    static func number(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
