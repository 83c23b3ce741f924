import DeriveLanguage
import DeriveJobs

/// What a worker asks of the database, by consumer. The queue is all it needs to run jobs;
/// the rest is what a deployment adds around them, and a part left out is a duty this worker
/// does not do (another worker, or no one, does it): the in-memory queue of the behaviour
/// tests has only the queue and the status registry.
public struct WorkerDatabase: Sendable {
    /// Claims, leases, completions, failures, rescue, promotion.
    public var queue: any JobStore
    /// Where the worker says what it is doing (`derive status`, the dashboard).
    public var registry: (any WorkerRegistry)?
    /// The schedules it fires (with `schedulerInterval`).
    public var schedules: (any ScheduleStore)?
    /// Keys noted before they are written, and the sweep of those never recorded.
    public var ledger: (any WriteLedger)?
    /// Superseded outputs to delete, and the tasks that expand reprocessing and revalidation.
    public var derivations: (any JobStore & ReprocessStore)?

    public init(queue: any JobStore, registry: (any WorkerRegistry)? = nil, schedules: (any ScheduleStore)? = nil,
                ledger: (any WriteLedger)? = nil, derivations: (any JobStore & ReprocessStore)? = nil) {
        self.queue = queue
        self.registry = registry
        self.schedules = schedules
        self.ledger = ledger
        self.derivations = derivations
    }

    /// Every part from one PostgreSQL or SQLite store.
    public init(_ database: any DeriveDatabase) {
        self.init(queue: database, registry: database, schedules: database, ledger: database, derivations: database)
    }
}
