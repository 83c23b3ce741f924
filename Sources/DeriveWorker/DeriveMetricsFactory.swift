import CoreMetrics
import Prometheus
import Synchronization

/// swift-metrics' factory over a swift-prometheus registry, made so that metrics can never
/// stop a worker. swift-prometheus' own `PrometheusMetricsFactory` registers every metric with
/// an empty HELP, and its registry ends the process (`fatalError`) when one name comes back with
/// another HELP, another type, other label names or other buckets. This factory instead:
///
/// - creates Derive's metrics (`MetricName`) with their help text, type and buckets, and only
///   with their own label names;
/// - lets other names through (libraries reporting through the global `MetricsSystem`) with
///   the shape they first had, and only names and label names Prometheus accepts as they are;
/// - answers anything else (a known name with other labels or another type, a name reused with
///   another shape, another name under Derive's `derive_` prefix) with a handler that drops what
///   it is given;
/// - drops negative counter increments, which swift-prometheus' counters answer with a
///   `precondition` failure.
public struct DeriveMetricsFactory: MetricsFactory {
    public let registry: PrometheusCollectorRegistry
    /// Buckets for histograms of names Derive does not know: swift-prometheus' defaults.
    private static let otherValueBuckets: [Double] = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000]
    private static let otherDurationBuckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]

    private enum Shape: Hashable {
        case counter, gauge, valueHistogram, durationHistogram
    }

    private final class Shapes: Sendable {
        let value = Mutex<[String: (shape: Shape, labels: [String])]>([:])
    }

    private let shapes = Shapes()

    public init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    /// True when `label` with these dimensions can be registered without upsetting the registry;
    /// the first use of a name Derive does not know fixes its shape.
    private func admits(_ label: String, _ dimensions: [(String, String)], as shape: Shape) -> Bool {
        let names = dimensions.map(\.0)
        if let known = MetricName(rawValue: label) {
            let kind: MetricName.Kind = switch shape {
            case .counter: .counter
            case .gauge: .gauge
            case .valueHistogram, .durationHistogram: .histogram
            }
            return known.kind == kind && names == known.labels
        }
        guard Self.isMetricName(label), !label.hasPrefix("derive_"), names.allSatisfy(Self.isLabelName),
              Set(names).count == names.count else { return false }
        return shapes.value.withLock { shapes in
            if let first = shapes[label] { return first.shape == shape && first.labels == names }
            shapes[label] = (shape, names)
            return true
        }
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        guard admits(label, dimensions, as: .counter) else { return NOOPMetricsHandler.instance }
        return UpOnlyCounter(registry.makeCounter(descriptor: descriptor(label), labels: dimensions))
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        guard admits(label, dimensions, as: .counter) else { return NOOPMetricsHandler.instance }
        return UpOnlyCounter(registry.makeCounter(descriptor: descriptor(label), labels: dimensions))
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        guard aggregate else {
            guard admits(label, dimensions, as: .gauge) else { return NOOPMetricsHandler.instance }
            return registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
        }
        guard admits(label, dimensions, as: .valueHistogram) else { return NOOPMetricsHandler.instance }
        let buckets = MetricName(rawValue: label) == nil ? Self.otherValueBuckets : Metrics.buckets
        return registry.makeValueHistogram(descriptor: descriptor(label), labels: dimensions, buckets: buckets)
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        guard admits(label, dimensions, as: .gauge) else { return NOOPMetricsHandler.instance }
        return registry.makeGauge(descriptor: descriptor(label), labels: dimensions)
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        // Derive's histograms are in seconds: a timer on one records its seconds there.
        if MetricName(rawValue: label) != nil {
            guard admits(label, dimensions, as: .valueHistogram) else { return NOOPMetricsHandler.instance }
            return SecondsTimer(registry.makeValueHistogram(descriptor: descriptor(label), labels: dimensions, buckets: Metrics.buckets))
        }
        guard admits(label, dimensions, as: .durationHistogram) else { return NOOPMetricsHandler.instance }
        return registry.makeDurationHistogram(descriptor: descriptor(label), labels: dimensions, buckets: Self.otherDurationBuckets)
    }

    public func destroyCounter(_ handler: any CounterHandler) {
        if let counter = handler as? UpOnlyCounter { registry.unregisterCounter(counter.counter) }
    }

    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        if let counter = handler as? UpOnlyCounter { registry.unregisterCounter(counter.counter) }
    }

    public func destroyRecorder(_ handler: any RecorderHandler) {
        switch handler {
        case let gauge as Prometheus.Gauge: registry.unregisterGauge(gauge)
        case let histogram as Prometheus.ValueHistogram: registry.unregisterValueHistogram(histogram)
        default: break
        }
    }

    public func destroyMeter(_ handler: any MeterHandler) {
        if let gauge = handler as? Prometheus.Gauge { registry.unregisterGauge(gauge) }
    }

    public func destroyTimer(_ handler: any TimerHandler) {
        switch handler {
        case let timer as SecondsTimer: registry.unregisterValueHistogram(timer.histogram)
        case let histogram as Prometheus.DurationHistogram: registry.unregisterDurationHistogram(histogram)
        default: break
        }
    }

    /// Derive's names carry their help text; other names none, every time (the registry
    /// compares help texts).
    private func descriptor(_ label: String) -> MetricNameDescriptor {
        MetricName(rawValue: label)?.descriptor ?? MetricNameDescriptor(metricName: label, unitName: "", helpText: "")
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`: a name the registry keeps as it is.
    static func isMetricName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.enumerated().allSatisfy { index, byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), UInt8(ascii: ":"): true
            case UInt8(ascii: "0")...UInt8(ascii: "9"): index > 0
            default: false
            }
        }
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*`, not `le` (the histograms' own) and not reserved (`__`).
    static func isLabelName(_ name: String) -> Bool {
        name != "le" && !name.hasPrefix("__") && !name.contains(":") && isMetricName(name)
    }
}

/// A swift-metrics timer on one of Derive's histograms, which count seconds.
final class SecondsTimer: TimerHandler {
    let histogram: Prometheus.ValueHistogram

    init(_ histogram: Prometheus.ValueHistogram) {
        self.histogram = histogram
    }

    func recordNanoseconds(_ duration: Int64) {
        histogram.record(Double(duration) / 1e9)
    }
}

/// A swift-prometheus counter that ignores what would stop the process: a negative or
/// non-finite increment.
final class UpOnlyCounter: CounterHandler, FloatingPointCounterHandler {
    let counter: Prometheus.Counter

    init(_ counter: Prometheus.Counter) {
        self.counter = counter
    }

    func increment(by amount: Int64) {
        if amount > 0 { counter.increment(by: amount) }
    }

    func increment(by amount: Double) {
        if amount > 0, amount.isFinite { counter.increment(by: amount) }
    }

    func reset() {
        counter.reset()
    }
}
