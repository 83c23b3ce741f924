import DeriveLanguage
import Synchronization

/// Database connections reused across calls, for a store used by many threads at once. A
/// connection is lent to one borrower at a time; one the borrower leaves unusable (the server
/// went away, a transaction left open) is closed instead of returned, and the next call opens
/// a fresh one, which is how a store recovers when its database comes back.
public final class ConnectionPool<Connection: AnyObject & Sendable>: Sendable {
    private let idle = Mutex<[Connection]>([])
    private let capacity: Int
    private let open: @Sendable () throws(DeriveError) -> Connection
    private let isReusable: @Sendable (Connection) -> Bool

    /// Keeps at most `capacity` idle connections; more may be open while many threads borrow.
    public init(capacity: Int, open: @escaping @Sendable () throws(DeriveError) -> Connection,
                isReusable: @escaping @Sendable (Connection) -> Bool) {
        self.capacity = capacity
        self.open = open
        self.isReusable = isReusable
    }

    public func withConnection<T>(_ body: (Connection) throws(DeriveError) -> T) throws(DeriveError) -> T {
        let connection: Connection
        if let reused = idle.withLock({ $0.popLast() }) {
            connection = reused
        } else {
            connection = try open()
        }
        defer {
            if isReusable(connection) {
                idle.withLock { idle in
                    if idle.count < capacity { idle.append(connection) }
                }
            }
        }
        return try body(connection)
    }

    /// Closes every idle connection (they close when released).
    public func drain() {
        idle.withLock { $0.removeAll() }
    }
}
