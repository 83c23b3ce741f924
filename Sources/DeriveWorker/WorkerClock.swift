/// The worker's time: when leases, ticks, the grace period and backoff are due, and its
/// sleeps. Any `Clock` (ContinuousClock in production; a clock the test moves by hand in
/// tests, so a 30-second grace period passes in microseconds). Wall-clock times the worker
/// reports (status, fires) stay `Date`s.
public struct WorkerClock: Sendable {
    /// Time since the clock was made.
    public let now: @Sendable () -> Duration
    public let sleep: @Sendable (Duration) async throws -> Void

    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        now = { origin.duration(to: clock.now) }
        sleep = { duration in try await clock.sleep(for: duration) }
    }

    public static var continuous: WorkerClock { WorkerClock(ContinuousClock()) }
}

extension Duration {
    /// Seconds as the worker's settings give them.
    static func seconds(of value: Double) -> Duration {
        value.isFinite ? .nanoseconds(Int64(max(0, min(value, 1e9)) * 1e9)) : .seconds(1_000_000_000)
    }
}
