import DeriveLanguage

/// Tells an idle worker that jobs may have arrived (PostgreSQL's `LISTEN derive_jobs`), so it
/// claims at once instead of at its next poll.
public protocol WorkNotifier: Sendable {
    /// Waits up to `timeout` seconds; true when a notification came. Errors (a lost
    /// connection) are the notifier's to recover from: it then returns after the timeout.
    func wait(timeout: Double) -> Bool
}
