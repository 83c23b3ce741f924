import DeriveLanguage
import DeriveJobs
import Foundation

/// The queues page (each queue, paused or not, with its Pause or Resume button) and the jobs
/// list's bulk selection.
extension Views {
    /// Every queue with jobs and every paused one, with its counts and its state; logged in,
    /// a Pause or Resume button on each and a form to pause a queue by name (one with no jobs
    /// yet).
    public static func queues(_ counts: [QueueCounts], paused: [PausedQueue], now: Date, actions: Actions = .readOnly, notice: Notice? = nil) -> String {
        let byName = Dictionary(uniqueKeysWithValues: counts.map { ($0.queue, $0) })
        let pausedByName = Dictionary(uniqueKeysWithValues: paused.map { ($0.queue, $0) })
        let names = Set(byName.keys).union(pausedByName.keys).sorted()
        let rows: [[Markup]] = names.map { name in
            let queue = byName[name]
            var row: [Markup] = [
                HTML.link("/jobs?" + HTML.query([("queue", name)]), name), pausedState(pausedByName[name]),
                .text("\(queue?.states[.available] ?? 0)"), .text("\(queue?.states[.scheduled] ?? 0)"), .text("\(queue?.states[.running] ?? 0)"),
                .text(queue?.oldestAvailable.map { duration(now.timeIntervalSince($0)) } ?? "–"),
            ]
            if case .allowed(let csrf) = actions { row.append(pauseForm(name, paused: pausedByName[name] != nil, csrf: csrf)) }
            return row
        }
        var header = ["queue", "state", "available", "scheduled", "running", "oldest waiting"]
        if case .allowed = actions { header.append("") }
        var content = HTML.element("p", [], .text("A paused queue keeps accepting jobs, but no worker claims from it until it is resumed; "
                                                  + "jobs already running finish, and workers go on with their other queues."))
        content = content + (names.isEmpty ? HTML.element("p", [], .text("No jobs waiting or running, and no queue paused."))
            : HTML.table(header, rows, id: "queue-control"))
        if case .allowed(let csrf) = actions {
            content = content + HTML.element("form", [("method", "post"), ("action", "/queues/pause"), ("class", "filter")],
                Markup(raw: "<input type=\"hidden\" name=\"csrf\" value=\"\(HTML.escape(csrf))\">"
                       + "<label>Pause a queue by name <input name=\"queue\" maxlength=\"64\" required></label> "
                       + "<button>Pause</button>"))
        } else {
            content = content + actionNote(actions, to: "pause and resume queues")
        }
        return HTML.page(title: "Queues", notice: notice, content)
    }

    /// `running`, or `paused` with since when and by whom (what the queue recorded, as text).
    static func pausedState(_ paused: PausedQueue?) -> Markup {
        guard let paused else { return HTML.element("span", [("class", "state-live")], .text("running")) }
        return HTML.element("span", [("class", "state-paused")], .text("paused"))
            + .text(" since \(timestamp(paused.pausedAt)) by \(paused.pausedBy)")
    }

    /// The button that pauses a running queue or resumes a paused one.
    static func pauseForm(_ queue: String, paused: Bool, csrf: String) -> Markup {
        let path = "/queues/" + (queue.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? queue)
        return actionForm(path + (paused ? "/resume" : "/pause"), paused ? "Resume" : "Pause", csrf: csrf)
    }

    /// The paused queues, said above a list of jobs (their waiting jobs will not run until resumed).
    static func pausedBanner(_ paused: [PausedQueue]) -> Markup {
        guard !paused.isEmpty else { return Markup(raw: "") }
        let names = Markup.join(paused.map { HTML.element("strong", [("class", "state-paused")], .text($0.queue)) }, separator: ", ")
        return HTML.element("p", [("class", "notice warning"), ("id", "paused-queues")],
                            .text("Paused, so their waiting jobs do not run: ") + names + .text(" (") + HTML.link("/queues", "resume on the queues page") + .text(")."))
    }
}

extension Views {
    /// The lists of jobs inside one form with the bulk buttons: each asks first, with the count
    /// (`Assets.bulkScript`). `back`: the list's filter, so the answer lands on the same list.
    static func bulkForm(_ lists: Markup, csrf: String, back: [(String, String?)]) -> Markup {
        func button(_ action: String, _ label: String, confirm: String) -> String {
            "<button name=\"action\" value=\"\(action)\" data-confirm=\"\(HTML.escape(confirm))\">\(HTML.escape(label))</button>"
        }
        let bar = "<div class=\"bulk\" id=\"bulk-bar\"><label><input type=\"checkbox\" data-select-all> Select all on this page</label> "
            + button("cancel", "Cancel selected", confirm: "Cancel {n}? Waiting jobs are cancelled at once, running ones stop at their next heartbeat; finished ones are skipped.")
            + button("retry", "Retry selected", confirm: "Retry {n}? Failed and cancelled jobs are queued again (duplicates of work already waiting are skipped); others are skipped.")
            + button("delete", "Delete selected (finished only)", confirm: "Delete {n} from the archive for good? Only finished jobs are deleted; waiting and running ones are kept.")
            + "</div>"
        let hidden = "<input type=\"hidden\" name=\"csrf\" value=\"\(HTML.escape(csrf))\">"
            + "<input type=\"hidden\" name=\"back\" value=\"\(HTML.escape(HTML.query(back)))\">"
        return HTML.element("form", [("method", "post"), ("action", "/jobs/bulk"), ("id", "bulk-jobs"), ("data-bulk", "")],
                            Markup(raw: hidden + bar) + lists)
            + Markup(raw: "<script src=\"/static/bulk.js\" defer></script>")
    }
}
