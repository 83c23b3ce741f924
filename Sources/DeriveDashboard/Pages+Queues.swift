import DeriveLanguage
import DeriveJobs
import DeriveHTTP
import Foundation

/// The queues page and its actions: pause and resume.
extension Pages {
    /// The source a job names, as written.
    static func source(_ job: JobSnapshot) -> String? {
        if case .string(let source)? = job.payload["source"] { source } else { nil }
    }

    func queues(_ request: HTTPRequest) throws -> HTTPResponse {
        let paused = try database.pausedQueues()
        let notice = Notice.queue(from: { request.query[$0] }, paused: Set(paused.map(\.queue)))
        return Self.respond(Views.queues(try database.counts(), paused: paused, now: Date(), actions: actions(request), notice: notice))
    }

    /// Pauses or resumes the queue the path names (or, for `/queues/pause`, the form's `queue`),
    /// and lands on the queues page saying what it did.
    func pauseQueue(_ request: HTTPRequest, form: [String: String], pause: Bool) throws -> HTTPResponse {
        guard access.mayAct(request, form: form) else { return refusal() }
        let routed: String? = request.routeParameters["name"]
        let name = (routed ?? form["queue"] ?? "").trimmingCharacters(in: .whitespaces)
        guard QueueName.isValid(name) else {
            return Self.respond(Views.notFound("That is not a queue name: 1 to 64 of A-Z a-z 0-9 _ . -"), status: .badRequest)
        }
        let changed = pause ? try database.pause(queue: name, by: "dashboard:" + access.client(request)) : try database.resume(queue: name)
        logger.info(pause ? "dashboard: queue paused" : "dashboard: queue resumed", metadata: ["queue": "\(name)", "changed": "\(changed)"])
        let done = pause ? (changed ? "paused" : "already-paused") : (changed ? "resumed" : "not-paused")
        return Self.redirect("/queues?" + HTML.query([("done", done), ("queue", name)]))
    }
}

extension Notice {
    /// What a pause or resume did. The queue's name is shown only when it is one and the
    /// queue is in the state the notice reports, so a link made elsewhere says nothing untrue.
    static func queue(from query: (String) -> String?, paused: Set<String>) -> Notice? {
        guard let name = query("queue"), QueueName.isValid(name) else { return nil }
        switch query("done") {
        case "paused"? where paused.contains(name):
            return Notice("Paused \(name): no worker claims from it until it is resumed; jobs already running finish.")
        case "already-paused"? where paused.contains(name):
            return Notice("Nothing changed: \(name) was already paused.", warning: true)
        case "resumed"? where !paused.contains(name):
            return Notice("Resumed \(name): workers claim from it again.")
        case "not-paused"? where !paused.contains(name):
            return Notice("Nothing changed: \(name) was not paused.", warning: true)
        default:
            return nil
        }
    }
}
