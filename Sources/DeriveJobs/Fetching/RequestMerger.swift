import DeriveLanguage
import Foundation
import Synchronization

/// Merges concurrent requests for the same key into one piece of work whose result every
/// caller receives ("single flight"): ten jobs in one worker naming the same source cause one
/// transfer. Callers block, as the worker's fetches run on their own threads.
public final class RequestMerger<Value: Sendable>: Sendable {
    private final class Flight: @unchecked Sendable {
        // Guarded by `condition`.
        let condition = NSCondition()
        var result: Result<Value, DeriveError>?
    }

    private let flights = Mutex<[String: Flight]>([:])

    public init() {}

    /// Runs `work` for `key` unless a run for it is already in progress, in which case this
    /// waits for that run's result instead. Returns the result and whether this call ran it.
    public func run(_ key: String, _ work: () throws(DeriveError) -> Value) throws(DeriveError) -> (value: Value, leader: Bool) {
        let (flight, leader) = flights.withLock { flights -> (Flight, Bool) in
            if let existing = flights[key] { return (existing, false) }
            let flight = Flight()
            flights[key] = flight
            return (flight, true)
        }
        if leader {
            let result = Result { () throws(DeriveError) -> Value in try work() }
            flights.withLock { $0[key] = nil }
            flight.condition.lock()
            flight.result = result
            flight.condition.broadcast()
            flight.condition.unlock()
            return (try result.get(), true)
        }
        flight.condition.lock()
        while flight.result == nil { flight.condition.wait() }
        let result = flight.result!
        flight.condition.unlock()
        return (try result.get(), false)
    }

    /// Keys in flight now (for tests and metrics).
    public var inFlight: Int { flights.withLock { $0.count } }
}
