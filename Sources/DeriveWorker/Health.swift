import DeriveLanguage
import DeriveJobs
import Foundation
import Synchronization

/// What the worker last learned about itself, for `/healthz` and `/readyz` on the metrics
/// port. The worker's loop writes it as it goes, so answering a probe never waits on a
/// database or a store.
public final class Health: Sendable {
    private struct State {
        var lastLoop: Date?
        var databaseOK: Date?
        var databaseError: String?
        var storeOK: Date?
        var storeError: String?
    }

    private let state = Mutex(State())
    /// How long without a turn of the worker's loop before it is not live: a database call can
    /// legitimately take up to the connection timeouts (about 30 s).
    public let liveWithin: Double
    /// How long after the last good database call (or store probe) the worker stays ready.
    public let readyWithin: Double

    public init(liveWithin: Double = 90, readyWithin: Double = 60) {
        self.liveWithin = liveWithin
        self.readyWithin = readyWithin
    }

    func looped() {
        state.withLock { $0.lastLoop = Date() }
    }

    func database(_ error: DeriveError?) {
        state.withLock { state in
            if let error { state.databaseError = error.description } else { state.databaseOK = Date(); state.databaseError = nil }
        }
    }

    func store(_ error: DeriveError?) {
        state.withLock { state in
            if let error { state.storeError = error.description } else { state.storeOK = Date(); state.storeError = nil }
        }
    }

    /// Alive: the worker's loop is turning.
    public func live(at now: Date = Date()) -> (ok: Bool, report: JSONValue) {
        let last = state.withLock { $0.lastLoop }
        let ok = last.map { now.timeIntervalSince($0) <= liveWithin } ?? false
        return (ok, .object(["live": .bool(ok), "lastLoopSecondsAgo": last.map { .decimal(now.timeIntervalSince($0)) } ?? .null]))
    }

    /// Ready: alive, and the database and the store answered lately.
    public func ready(at now: Date = Date()) -> (ok: Bool, report: JSONValue) {
        let snapshot = state.withLock { $0 }
        let live = live(at: now).ok
        let database = snapshot.databaseOK.map { now.timeIntervalSince($0) <= readyWithin } ?? false
        let store = snapshot.storeOK.map { now.timeIntervalSince($0) <= readyWithin } ?? false
        func part(_ ok: Bool, _ error: String?) -> JSONValue {
            .object(["ok": .bool(ok), "error": error.map(JSONValue.string) ?? .null])
        }
        return (live && database && store, .object([
            "ready": .bool(live && database && store), "live": .bool(live),
            "database": part(database, snapshot.databaseError), "store": part(store, snapshot.storeError),
        ]))
    }
}
