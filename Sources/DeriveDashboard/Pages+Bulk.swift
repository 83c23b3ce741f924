import DeriveLanguage
import DeriveJobs
import DeriveHTTP
import Foundation

/// The jobs list's bulk actions: cancel, retry or delete the selected jobs, each counted by
/// what became of it.
extension Pages {
    /// The most ids one request may carry (a page lists at most 50 waiting and 50 finished).
    static let bulkLimit = 200

    /// The filter fields the list's bulk form carries back, so the redirect lands on the same list.
    static let listFields = ["outcome", "queue", "code", "host", "source", "hours"]

    func bulk(_ request: HTTPRequest, pairs: [(String, String)]) throws -> HTTPResponse {
        let form = Dictionary(pairs, uniquingKeysWith: { _, last in last })
        guard access.mayAct(request, form: form) else { return refusal() }
        let texts = pairs.filter { $0.0 == "id" }.map(\.1)
        func bad(_ why: String) -> HTTPResponse { Self.respond(Views.notFound(why), status: .badRequest) }
        guard !texts.isEmpty else { return bad("No job was selected: tick the jobs to act on first.") }
        guard texts.count <= Self.bulkLimit else { return bad("At most \(Self.bulkLimit) jobs a request; \(texts.count) were sent.") }
        var ids: [JobID] = []
        for text in texts {
            guard let id = JobID(text), id > 0 else { return bad("\(String(text.prefix(40))) is not a job id.") }
            if !ids.contains(id) { ids.append(id) }
        }
        let counts: [(String, String?)]
        switch form["action"] {
        case "cancel"?: counts = try bulkCancel(ids)
        case "retry"?: counts = try bulkRetry(ids)
        case "delete"?: counts = try bulkDelete(ids)
        default: return bad("Say what to do with the selected jobs: cancel, retry or delete.")
        }
        logger.info("dashboard: bulk action", metadata: ["action": "\(LogText.oneLine(form["action"] ?? ""))", "jobs": "\(ids.count)",
                                                         "result": "\(counts.map { "\($0.0)=\($0.1 ?? "")" }.joined(separator: " "))"])
        // Back to the list it came from: its filter, read from the form by name only.
        let back = FormFields.pairs(Array((form["back"] ?? "").utf8)).filter { Self.listFields.contains($0.0) && !$0.1.isEmpty }
        return Self.redirect("/jobs?" + HTML.query(back.map { ($0.0, Optional($0.1)) } + counts))
    }

    /// Waiting jobs are cancelled at once, running ones asked to stop; finished or missing ones skipped.
    func bulkCancel(_ ids: [JobID]) throws(DeriveError) -> [(String, String?)] {
        var tally: [CancelResult: Int] = [:]
        for id in ids { tally[try database.cancel(id), default: 0] += 1 }
        return [("done", "bulk-cancel"), ("cancelled", "\(tally[.cancelled] ?? 0)"), ("requested", "\(tally[.requested] ?? 0)"),
                ("finished", "\(tally[.finished] ?? 0)"), ("missing", "\(tally[.notFound] ?? 0)")]
    }

    /// Failed and cancelled jobs queued again (or counted as already waiting, as "Retry all"
    /// counts duplicates), scheduled ones run now; the rest skipped with their state.
    func bulkRetry(_ ids: [JobID]) throws(DeriveError) -> [(String, String?)] {
        let asked = Date()
        var queued = Set<JobID>(), waiting = 0, runNow = 0, skipped = 0, missing = 0
        for id in ids {
            guard try database.job(id) != nil else {
                missing += 1
                continue
            }
            guard let live = try database.retry(id) else {
                skipped += 1
                continue
            }
            if live == id {
                runNow += 1
            } else if queued.contains(live) {
                waiting += 1
            } else if try isNew(live, since: asked) {
                queued.insert(live)
            } else {
                waiting += 1
            }
        }
        return [("done", "bulk-retry"), ("queued", "\(queued.count)"), ("waiting", "\(waiting)"), ("run_now", "\(runNow)"),
                ("skipped", "\(skipped)"), ("missing", "\(missing)")]
    }

    /// Finished jobs deleted from the archive; waiting and running ones are never deleted.
    func bulkDelete(_ ids: [JobID]) throws(DeriveError) -> [(String, String?)] {
        let deleted = try database.deleteFinished(ids)
        var live = 0, missing = 0
        for id in ids where !deleted.contains(id) {
            if try database.job(id) != nil { live += 1 } else { missing += 1 }
        }
        return [("done", "bulk-delete"), ("deleted", "\(deleted.count)"), ("live", "\(live)"), ("missing", "\(missing)")]
    }
}

extension Notice {
    /// What a bulk action did to each selected job, from the counts its redirect carries.
    static func bulk(from query: (String) -> String?) -> Notice? {
        func number(_ name: String) -> Int? { query(name).flatMap { Int($0) }.flatMap { (0...100_000).contains($0) ? $0 : nil } }
        func sentence(_ lead: String, _ parts: [(Int?, String)]) -> String? {
            guard parts.allSatisfy({ $0.0 != nil }) else { return nil }
            let said = parts.filter { $0.0! > 0 }.map { "\($0.0!) \($0.1)" }
            return lead + (said.isEmpty ? "nothing" : said.joined(separator: "; ")) + "."
        }
        switch query("done") {
        case "bulk-cancel"?:
            guard let text = sentence("Cancel: ", [
                (number("cancelled"), "cancelled (they were waiting)"),
                (number("requested"), "cancel requested (running: their workers stop them at the next heartbeat)"),
                (number("finished"), "skipped: already finished"), (number("missing"), "skipped: no such job"),
            ]) else { return nil }
            return Notice(text, warning: (number("cancelled") ?? 0) + (number("requested") ?? 0) == 0)
        case "bulk-retry"?:
            guard let text = sentence("Retry: ", [
                (number("queued"), "queued again"), (number("waiting"), "skipped as duplicates (their work was already waiting)"),
                (number("run_now"), "moved from their scheduled time to run now"),
                (number("skipped"), "skipped: not failed or cancelled (completed, waiting or running jobs are not retried)"),
                (number("missing"), "skipped: no such job"),
            ]) else { return nil }
            return Notice(text, warning: (number("queued") ?? 0) + (number("run_now") ?? 0) == 0)
        case "bulk-delete"?:
            guard let deleted = number("deleted"), let text = sentence("Delete: ", [
                (deleted, deleted == 1 ? "finished job deleted" : "finished jobs deleted"),
                (number("live"), "skipped: waiting or running (only finished jobs are deleted; cancel them first)"),
                (number("missing"), "skipped: no such job"),
            ]) else { return nil }
            return Notice(text, warning: deleted == 0)
        default:
            return nil
        }
    }
}
