import CoreMetrics
import DeriveWorker
import Testing

/// Each worker's own metrics, and the metrics factory's promise that no use of swift-metrics
/// can stop a worker.
@Suite struct MetricsTests {
    @Test func eachWorkersMetricsAreItsOwn() {
        let one = Metrics(), other = Metrics()
        one.increment(.jobs, ["outcome": "failed"])
        #expect(one.value(.jobs, ["outcome": "failed"]) == 1 && other.value(.jobs, ["outcome": "failed"]) == 0)
        #expect(!other.render().contains("outcome=\"failed\""))
    }

    /// swift-prometheus' registry ends the process when a name comes back with another help
    /// text, type or label names: through Derive's factory none of that can happen.
    @Test func noUseOfSwiftMetricsCanStopTheWorker() {
        let metrics = Metrics()
        let factory = metrics.factory
        // Derive's names: with the wrong labels, or as another type, dropped.
        Counter(label: MetricName.jobs.rawValue, factory: factory).increment()
        Counter(label: MetricName.jobs.rawValue, dimensions: [("outcome", "x"), ("extra", "y")], factory: factory).increment()
        Gauge(label: MetricName.jobs.rawValue, dimensions: [("outcome", "x")], factory: factory).record(3)
        Timer(label: MetricName.databaseErrors.rawValue, factory: factory).recordSeconds(1)
        Meter(label: MetricName.stageSeconds.rawValue, dimensions: [("stage", "x")], factory: factory).set(1)
        // With their own labels, through any of swift-metrics' types that fit: counted.
        Counter(label: MetricName.jobs.rawValue, dimensions: [("outcome", "completed")], factory: factory).increment(by: 2)
        FloatingPointCounter(label: MetricName.fetchBytes.rawValue, factory: factory).increment(by: 4.0)
        Timer(label: MetricName.stageSeconds.rawValue, dimensions: [("stage", "store")], factory: factory).recordMilliseconds(20)
        Meter(label: MetricName.slots.rawValue, factory: factory).set(6)
        // A name Derive does not know keeps the shape it first had.
        Counter(label: "library_requests_total", dimensions: [("method", "GET")], factory: factory).increment()
        Counter(label: "library_requests_total", factory: factory).increment()
        Counter(label: "library_requests_total", dimensions: [("path", "/")], factory: factory).increment()
        Gauge(label: "library_requests_total", factory: factory).record(1)
        Recorder(label: "library_requests_total", factory: factory).record(1)
        Timer(label: "library_call", factory: factory).recordMilliseconds(7)
        Recorder(label: "library_call", factory: factory).record(1)
        // Names and label names Prometheus would have to rewrite (and so could merge), dropped.
        Counter(label: "library.requests", factory: factory).increment()
        Counter(label: "library_requests", dimensions: [("le", "1")], factory: factory).increment()
        Counter(label: "library_requests", dimensions: [("a", "1"), ("a", "2")], factory: factory).increment()
        Counter(label: "9lives", factory: factory).increment()
        // Derive's prefix is Derive's, and counters only go up (swift-prometheus' traps otherwise).
        Counter(label: "derive_other_total", factory: factory).increment()
        Counter(label: MetricName.databaseErrors.rawValue, factory: factory).increment(by: -1)
        FloatingPointCounter(label: MetricName.fetchBytes.rawValue, factory: factory).increment(by: -Double.infinity)
        FloatingPointCounter(label: MetricName.fetchBytes.rawValue, factory: factory).increment(by: Double.nan)

        let text = metrics.render()
        #expect(!text.contains("derive_jobs_total 1") && !text.contains("outcome=\"x\"") && !text.contains("extra="))
        #expect(text.contains("derive_jobs_total{outcome=\"completed\"} 2\n"))
        #expect(text.contains("derive_fetch_bytes_total 4.0\n"))
        #expect(text.contains("derive_stage_seconds_bucket{stage=\"store\",le=\"0.025\"} 1\n"))
        #expect(text.contains("derive_slots 6.0\n") && text.contains("derive_database_errors_total 0\n"))
        #expect(text.contains("# TYPE library_requests_total counter\nlibrary_requests_total{method=\"GET\"} 1\n"))
        #expect(!text.contains("library_requests_total 1") && !text.contains("path="))
        #expect(text.contains("# TYPE library_call histogram\n") && text.contains("library_call_count 1\n"))
        #expect(!text.contains("library.requests") && !text.contains("library_requests{") && !text.contains("9lives"))
        #expect(!text.contains("derive_other_total"))
    }
}
