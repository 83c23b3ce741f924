import DeriveLanguage
import DeriveJobs
import Foundation
import Synchronization

/// `LISTEN derive_jobs` on a connection of its own: wakes an idle worker as soon as jobs are
/// submitted. When the connection breaks it reconnects (with backoff) and reports a wake-up,
/// since notifications sent meanwhile were lost and a claim is the safe answer.
public final class PostgresWorkNotifier: WorkNotifier {
    private let url: String
    private let connection = Mutex<PostgresConnection?>(nil)
    private let failures = Mutex(0)

    public init(url: String) {
        self.url = url
    }

    public func wait(timeout: Double) -> Bool {
        do throws(PostgresError) {
            let listening = try listeningConnection()
            let received = try listening.notifications(timeout: timeout)
            failures.withLock { $0 = 0 }
            return !received.isEmpty
        } catch {
            connection.withLock { $0 = nil }
            let attempt = failures.withLock { failures in
                failures += 1
                return failures
            }
            Thread.sleep(forTimeInterval: min(timeout, Backoff(base: 0.5, factor: 2, maximum: 30).ceiling(attempt: attempt)))
            return true
        }
    }

    private func listeningConnection() throws(PostgresError) -> PostgresConnection {
        if let open = connection.withLock({ $0 }) { return open }
        let fresh = try PostgresConnection(url: url, applicationName: "derive-listener")
        try fresh.execute("LISTEN derive_jobs")
        connection.withLock { $0 = fresh }
        return fresh
    }
}
