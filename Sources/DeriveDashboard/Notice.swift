import DeriveJobs

/// What an action did, told on the page its redirect lands on (`?done=…`). The query carries
/// only a code and numbers, never text: the sentence is written here, so a link made elsewhere
/// cannot put words of its own on a dashboard page.
public struct Notice: Sendable, Equatable {
    public var text: String
    /// Nothing happened (or not what was asked): shown in amber.
    public var warning: Bool

    public init(_ text: String, warning: Bool = false) {
        self.text = text
        self.warning = warning
    }

    /// The redirect's query for each outcome.
    enum Done {
        static func cancel(_ result: CancelResult) -> String {
            switch result {
            case .requested: "done=cancel-requested"
            case .cancelled: "done=cancelled"
            case .finished: "done=cancel-finished"
            case .notFound: "done=cancel-missing"
            }
        }
    }

    /// The notice a page's query asks for; nil for none or for a code it does not know.
    /// `job`: the job whose page this is, when it is one.
    static func from(_ query: (String) -> String?, job: JobID? = nil) -> Notice? {
        func number(_ name: String) -> Int64? { query(name).flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil } }
        let this = job.map { "#\($0)" } ?? "this job"
        switch query("done") {
        case "cancel-requested"?:
            return Notice("Cancel requested: the worker running \(this) stops it at its next heartbeat, and it is then archived as cancelled.")
        case "cancelled"?:
            return Notice("Cancelled: \(this) was waiting and will not run.")
        case "cancel-finished"?:
            return Notice("Nothing to cancel: \(this) had already finished.", warning: true)
        case "retried"?:
            guard let from = number("from") else { return nil }
            return Notice("Queued again as \(this), a retry of #\(from).")
        case "retry-waiting"?:
            guard let from = number("from") else { return nil }
            return Notice("Nothing new was queued: the work of #\(from) was already waiting as \(this).", warning: true)
        case "run-now"?:
            return Notice("Runs now: \(this) was moved from its scheduled time to the front of its queue.")
        case "not-retried"?:
            let why: String
            switch query("state") {
            case "completed"?: why = "it completed (only failed or cancelled jobs are retried)"
            case "running"?: why = "it is running"
            case "available"?: why = "it is already waiting to run"
            default: why = "there is nothing to retry"
            }
            return Notice("Nothing was queued: \(why).", warning: true)
        case "group-retried"?:
            guard let queued = number("queued"), let skipped = number("skipped") else { return nil }
            let total = queued + skipped
            var text = "Retried \(total) failed job\(total == 1 ? "" : "s"): \(queued) queued again"
            if skipped > 0 {
                text += ", \(skipped) skipped as duplicate\(skipped == 1 ? "" : "s") (their work was already waiting, or another of them queued it)"
            }
            if let capped = number("capped"), capped > 0 { text += "; stopped at \(capped) a click, click again for the rest" }
            return Notice(text + ".", warning: queued == 0)
        case "reprocess-queued"?:
            return Notice("Reprocess queued as \(this): a worker expands it into one job per asset.")
        case "reprocess-waiting"?:
            return Notice("Nothing new was queued: the same reprocess was already waiting as \(this).", warning: true)
        default:
            return nil
        }
    }
}
