import DeriveLanguage
import DeriveJobs
import Foundation

/// The dashboard's pages, as pure functions of what the queue's seams return: testable without
/// a server, and the same on PostgreSQL, SQLite and the in-memory queue.
public enum Views {
    /// What the viewer may do on a page.
    public enum Actions: Sendable, Equatable {
        /// No token is configured: nobody acts.
        case readOnly
        /// A token is configured and this browser has not logged in.
        case logIn
        /// Forms carry this CSRF value.
        case allowed(csrf: String)
    }

    /// `confirm`: the question the script asks before the form is sent (bulk actions).
    static func actionForm(_ path: String, _ label: String, csrf: String, fields: [(String, String)] = [], confirm: String? = nil) -> Markup {
        let hidden = ([("csrf", csrf)] + fields).map { "<input type=\"hidden\" name=\"\(HTML.escape($0.0))\" value=\"\(HTML.escape($0.1))\">" }.joined()
        return HTML.element("form", [("method", "post"), ("action", path), ("class", "action")] + (confirm.map { [("data-confirm", $0)] } ?? []),
                            Markup(raw: hidden + "<button>\(HTML.escape(label))</button>"))
    }

    static func actionNote(_ actions: Actions, to purpose: String = "retry and cancel") -> Markup {
        switch actions {
        case .readOnly: HTML.element("p", [("class", "note")], .text("Read-only: set DERIVE_DASHBOARD_TOKEN to \(purpose) from here."))
        case .logIn: HTML.element("p", [("class", "note")], HTML.link("/login", "Log in") + .text(" to \(purpose)."))
        case .allowed: Markup(raw: "")
        }
    }

    public static func login(failed: Bool) -> String {
        let message = failed ? HTML.element("p", [("class", "error")], .text("That is not the token.")) : Markup(raw: "")
        return HTML.page(title: "Log in", message + HTML.element("form", [("method", "post"), ("action", "/login")],
            Markup(raw: "<label>Token (DERIVE_DASHBOARD_TOKEN) <input type=\"password\" name=\"token\" autocomplete=\"current-password\"></label> <button>Log in</button>")))
    }

    /// For a browser that is logged in: the way out.
    public static func loggedIn(csrf: String) -> String {
        HTML.page(title: "Logged in", HTML.element("p", [], .text("This browser may act (retry, cancel, reprocess) until it logs out or the session ends."))
            + actionForm("/logout", "Log out", csrf: csrf))
    }

    /// The live part of the overview (the script replaces it every few seconds).
    /// `workers` as `WorkerLiveness.workers(heardSince:from:at:)` believes them: each with only
    /// the jobs its run still holds.
    /// `paused`: queues no worker claims from, marked (and listed even with no jobs).
    public static func overviewLive(counts: [QueueCounts], workers: [WorkerStatus], throughput: [ThroughputBucket], now: Date,
                                    liveness: WorkerLiveness = WorkerLiveness(), paused: [PausedQueue] = []) -> Markup {
        let pausedNames = Set(paused.map(\.queue))
        let counts = counts + paused.filter { name in !counts.contains { $0.queue == name.queue } }
            .map { QueueCounts(queue: $0.queue, states: [:], oldestAvailable: nil) }
        let queueRows: [[Markup]] = counts.sorted { $0.queue < $1.queue }.map { queue in
            [HTML.link("/jobs?" + HTML.query([("queue", queue.queue)]), queue.queue)
                + (pausedNames.contains(queue.queue) ? .text(" ") + HTML.element("span", [("class", "state-paused")], .text("paused")) : Markup(raw: "")),
             .text("\(queue.states[.available] ?? 0)"), .text("\(queue.states[.scheduled] ?? 0) (\(queue.retrying))"),
             .text("\(queue.states[.running] ?? 0)"),
             .text(queue.oldestAvailable.map { duration(now.timeIntervalSince($0)) } ?? "–")]
        }
        let queues = counts.isEmpty ? HTML.element("p", [], .text("No jobs waiting or running."))
            : HTML.table(["queue", "available", "scheduled (retries)", "running", "oldest waiting"], queueRows, id: "queues")
        let workerRows: [[Markup]] = workers.map { worker in
            let silent = now.timeIntervalSince(worker.seenAt)
            let state = liveness.state(of: worker, at: now).rawValue
            let jobs = Markup.join(worker.running.map { job in
                HTML.link("/jobs/\(job.id)", "#\(job.id)") + .text(" \(job.stage) \(duration(now.timeIntervalSince(job.since)))")
            }, separator: "<br>")
            return [.text(worker.id), HTML.element("span", [("class", "state-\(state)")], .text(state)),
                    .text("\(worker.running.count)/\(worker.slots)"), .text(worker.queues.joined(separator: ", ")),
                    state == "gone" ? .text("–") : jobs, .text("\(duration(silent)) ago")]
        }
        let workersTable = workers.isEmpty ? HTML.element("p", [], .text("No worker has reported in the last hour."))
            : HTML.table(["worker", "state", "slots busy", "queues", "running", "last heard"], workerRows, id: "workers")
        return HTML.element("h2", [], .text("Queues ") + HTML.element("small", [], HTML.link("/queues", "pause or resume"))) + queues
            + HTML.element("h2", [], .text("Finished per minute, last hour")) + chart(throughput, now: now)
            + HTML.element("h2", [], .text("Workers")) + workersTable
    }

    public static func overview(_ live: Markup) -> String {
        HTML.page(title: "Overview", HTML.element("div", [("id", "live"), ("data-refresh", "/live")], live))
    }

    /// Completed and failed jobs per minute as bars under a time axis, drawn on the server (no
    /// chart library); the totals page has them per queue and per worker.
    static func chart(_ buckets: [ThroughputBucket], now: Date) -> Markup {
        let window = TotalsWindow.lastHour, start = window.start(at: now)
        var series = Series(buckets: window.buckets)
        for bucket in buckets {
            let index = Int(((bucket.start.timeIntervalSince1970 - start.timeIntervalSince1970) / Double(window.bucket)).rounded(.down))
            guard (0..<window.buckets).contains(index) else { continue }
            series.completed[index] += bucket.counts[.completed] ?? 0
            series.failed[index] += bucket.counts[.failed] ?? 0
        }
        return chart(series, window: window, start: start, id: "throughput", label: "all queues", over: "the last hour")
            + HTML.element("p", [], HTML.link("/totals", "Totals per queue and per worker, over the last hour or day"))
    }

    /// Finished jobs, newest first, with the filter's form and a link to the next page.
    /// `hours`: the "finished within" choice the filter's time came from.
    /// Logged in (`actions`), each row has a checkbox and the list a bulk form: cancel, retry or
    /// delete the selected jobs. `paused`: queues whose waiting jobs will not run until resumed.
    /// `follow`: the first page, which the script reads again as jobs change.
    public static func jobs(_ page: JobPage, filter: JobFilter, hours: Int? = nil, live: [JobSnapshot], notice: Notice? = nil,
                            actions: Actions = .readOnly, paused: [PausedQueue] = [], follow: Bool = false) -> String {
        func field(_ name: String, _ label: String, _ value: String?) -> Markup {
            HTML.element("label", [], .text(label + " ") + Markup(raw: "<input name=\"\(name)\" value=\"\(HTML.escape(value ?? ""))\">"))
        }
        let outcomes = ["", "completed", "failed", "cancelled"].map { value in
            "<option value=\"\(value)\"\(filter.outcome?.rawValue == value || (value.isEmpty && filter.outcome == nil) ? " selected" : "")>\(value.isEmpty ? "any" : value)</option>"
        }.joined()
        let choices: [(Int?, String)] = [(nil, "any time"), (1, "the last hour"), (24, "the last day"), (168, "the last week"), (720, "the last 30 days")]
        let windows = choices.map { value, label in
                "<option value=\"\(value.map(String.init) ?? "")\"\(value == hours ? " selected" : "")>\(label)</option>"
            }.joined()
        let form = HTML.element("form", [("method", "get"), ("action", "/jobs"), ("class", "filter")],
                                Markup(raw: "<label>outcome <select name=\"outcome\">\(outcomes)</select></label>")
                                    + field("queue", "queue", filter.queue) + field("code", "error code", filter.errorCode)
                                    + field("host", "source host", filter.sourceHost) + field("source", "source or file name contains", filter.sourceContains)
                                    + Markup(raw: "<label>finished in <select name=\"hours\">\(windows)</select></label>")
                                    + Markup(raw: "<button>Filter</button>"))
        let pausedNames = Set(paused.map(\.queue))
        let selectable: Bool
        if case .allowed = actions { selectable = true } else { selectable = false }
        // Logged in, every row starts with its checkbox.
        func select(_ job: JobSnapshot) -> [Markup] {
            selectable ? [Markup(raw: "<input type=\"checkbox\" name=\"id\" value=\"\(job.id)\" aria-label=\"select #\(job.id)\">")] : []
        }
        let box: [String] = selectable ? [""] : []
        let liveRows: [[Markup]] = live.map { job in
            let waitingOnPause = job.state != .running && pausedNames.contains(job.queue)
            return select(job) + [HTML.link("/jobs/\(job.id)", "#\(job.id)"),
                    waitingOnPause ? .text(job.state.rawValue + " ") + HTML.element("span", [("class", "state-paused")], .text("(queue paused)"))
                        : .text(job.state.rawValue), .text(job.queue), .text(source(job)), .text("\(job.attempt)/\(job.maxAttempts)")]
        }
        let finishedRows: [[Markup]] = page.jobs.map { job in
            select(job) + [HTML.link("/jobs/\(job.id)", "#\(job.id)"), HTML.element("span", [("class", "state-\(job.state.rawValue)")], .text(job.state.rawValue)),
             .text(job.queue), .text(source(job)), .text(lastError(job)?.code ?? ""),
             .text(job.finishedAt.map { timestamp($0) } ?? "")]
        }
        var content = form + pausedBanner(paused)
        var lists = Markup(raw: "")
        if !live.isEmpty {
            lists = lists + HTML.element("h2", [], .text("Waiting and running"))
                + HTML.table(box + ["job", "state", "queue", "source", "attempt"], liveRows, id: "live-jobs")
        }
        lists = lists + HTML.element("h2", [], .text("Finished, newest first"))
        lists = lists + (finishedRows.isEmpty ? HTML.element("p", [], .text("No finished job matches."))
            : HTML.table(box + ["job", "outcome", "queue", "source", "error", "finished"], finishedRows, id: "finished-jobs"))
        if case .allowed(let csrf) = actions, !(live.isEmpty && page.jobs.isEmpty) {
            content = content + bulkForm(lists, csrf: csrf, back: filterQuery(filter) + [("hours", hours.map(String.init))])
        } else {
            content = content + actionNote(actions, to: "select jobs and cancel, retry or delete them") + lists
        }
        if let next = page.next {
            // The finishing time as Swift prints a Double, which reads back to the same Double:
            // the cursor must compare equal to the time it came from, to the last digit.
            let query = filterQuery(filter) + [("hours", hours.map(String.init)), ("before", "\(next.finishedAt.timeIntervalSince1970)"), ("before_id", String(next.id))]
            content = content + HTML.element("p", [], HTML.element("a", [("href", "/jobs?" + HTML.query(query)), ("rel", "next")], .text("Older →")))
        }
        // The first page follows the queue (the script reads it again every 5 s, and holds off
        // while a field of the page is in use); an older page stays as it was.
        // (An empty data-refresh: the page's own address, whatever filters it carries.)
        return HTML.page(title: "Jobs", notice: notice, HTML.element("div", [("id", "jobs")] + (follow ? [("data-refresh", "")] : []), content))
    }

    static func filterQuery(_ filter: JobFilter) -> [(String, String?)] {
        [("outcome", filter.outcome?.rawValue), ("queue", filter.queue), ("code", filter.errorCode), ("host", filter.sourceHost),
         ("source", filter.sourceContains)]
    }

    /// What a job's page shows beside the job's own row, read by the page from elsewhere.
    public struct JobContext: Sendable {
        /// The asset its source became (by the report's SHA-256), when the catalog has it.
        public var assetID: Int64?
        /// The other jobs of its work (its retries, or the job it retried and its siblings),
        /// oldest first.
        public var generations: [JobSnapshot]
        /// What its worker last said it was doing, while it runs.
        public var stage: WorkerStatus.RunningJob?
        public var now: Date

        public init(assetID: Int64? = nil, generations: [JobSnapshot] = [], stage: WorkerStatus.RunningJob? = nil, now: Date = Date()) {
            self.assetID = assetID
            self.generations = generations
            self.stage = stage
            self.now = now
        }
    }

    /// How often a live job's page reads itself again (the script; every 2 s until it ends).
    static let jobRefreshSeconds = 2

    /// One job: its document, its attempts and errors, its timings and its outputs.
    /// `notice`: what the action that led here did. A live job's page reads itself again every
    /// few seconds (the script replaces `#job` with the new page's) until the job has ended.
    /// `originalNames`: the file names its source was uploaded from.
    public static func job(_ job: JobSnapshot, actions: Actions = .readOnly, images: Bool = false, notice: Notice? = nil,
                           originalNames: [String] = [], context: JobContext = JobContext()) -> String {
        // A running job asked to cancel says so (the worker stops it at its next heartbeat).
        let stopping = job.state == .running && job.cancelRequested
        var facts: [[Markup]] = [
            [.text("state"), HTML.element("span", [("class", "state-\(stopping ? "stopping" : job.state.rawValue)"), ("id", "job-state")],
                                          .text(stopping ? "running, cancel requested" : job.state.rawValue))],
        ]
        if job.state == .running, let stage = context.stage {
            facts.append([.text("stage"), HTML.element("span", [("id", "job-stage")],
                                                       .text("\(stage.stage) for \(duration(context.now.timeIntervalSince(stage.since)))"))])
        }
        facts += [
            [.text("queue"), .text(job.queue)], [.text("priority"), .text("\(job.priority)")],
            [.text("attempts"), .text("\(job.attempt) of \(job.maxAttempts)")], [.text("source"), .text(source(job))],
        ]
        if !originalNames.isEmpty { facts.append([.text("uploaded as"), .text(originalNames.joined(separator: ", "))]) }
        // The tags and context the job gives its asset (what if_…_in_tags and ctx: read).
        if case .array(let tags)? = job.payload["tags"], !tags.isEmpty {
            facts.append([.text("tags"), .text(tagList(tags.map { text($0) }))])
        }
        if case .object(let members)? = job.payload["context"], !members.isEmpty {
            facts.append([.text("context"), .text(contextList(members.map { ($0.key, text($0.value)) }))])
        }
        if let asset = context.assetID { facts.append([.text("asset"), HTML.link("/assets/\(asset)", "asset #\(asset)")]) }
        facts.append([.text("created"), .text(timestamp(job.createdAt))])
        let original = retryOf(job)
        if let original { facts.append([.text("retry of"), HTML.link("/jobs/\(original)", "#\(original)")]) }
        let others = context.generations.filter { $0.id != job.id && $0.id != original }
        if !others.isEmpty {
            // A job with no dedupe key of its own: its retries; a retry or a keyed job: the
            // other jobs of the same work.
            let label = job.dedupeKey == nil ? "retried as" : "same work"
            facts.append([.text(label), Markup.join(others.map { other in
                HTML.link("/jobs/\(other.id)", "#\(other.id)") + .text(" (\(other.state.rawValue))")
            }, separator: ", ")])
        }
        if let worker = job.worker ?? job.leaseOwner { facts.append([.text("worker"), .text(worker)]) }
        let total = milliseconds(job.result?["timings"]?["total"])
        // The start of its last attempt, as the claim recorded it; a row without one (archived
        // before Derive kept it) from the report: the finish less the report's total.
        let started = job.startedAt ?? total.flatMap { total in job.finishedAt.map { $0.addingTimeInterval(-total / 1000) } }
        if let started, job.state == .running || !job.state.isLive {
            facts.append([.text("started"), .text("\(preciseTimestamp(started)) (its last attempt)")])
        }
        facts.append([.text("finished"), .text(job.finishedAt.map { preciseTimestamp($0) } ?? "–")])
        if let started, let finished = job.finishedAt {
            let report = total.map { String(format: ", %.1f ms in the worker's report", $0) } ?? ""
            facts.append([.text("run time"), .text("\(elapsed(finished.timeIntervalSince(started)))\(report)")])
        } else if let started, job.state == .running {
            facts.append([.text("run time"), .text("\(elapsed(context.now.timeIntervalSince(started))) so far")])
        }
        var content = HTML.table(["", ""], facts, id: "facts")
        if case .allowed(let csrf) = actions {
            if job.state == .failed || job.state == .cancelled || job.state == .scheduled {
                content = content + actionForm("/jobs/\(job.id)/retry", job.state == .scheduled ? "Run now" : "Retry", csrf: csrf)
            }
            if job.state.isLive && !stopping { content = content + actionForm("/jobs/\(job.id)/cancel", "Cancel", csrf: csrf) }
        } else {
            content = content + actionNote(actions)
        }
        if !job.errors.isEmpty {
            let rows: [[Markup]] = job.errors.map { entry in
                [.text(entry["attempt"].map(JSONWriter.compact) ?? ""), .text(text(entry["code"])), .text(text(entry["detail"])),
                 .text(entry["retryable"] == .bool(true) ? "yes" : "no"), .text(text(entry["at"]))]
            }
            content = content + HTML.element("h2", [], .text("Errors")) + HTML.table(["attempt", "code", "detail", "retryable", "at"], rows, id: "errors")
        }
        if case .object? = job.result, case .object(let timings)? = job.result?["timings"] {
            var outputs: [JSONValue] = []
            if case .array(let list)? = job.result?["outputs"] { outputs = list }
            content = content + HTML.element("h2", [], .text("Timings")) + waterfall(timings, outputs: outputs)
        }
        if case .array(let outputs)? = job.result?["outputs"], !outputs.isEmpty {
            let rows: [[Markup]] = outputs.enumerated().map { index, output in
                let box = PictureBox.job.shown
                let shown = fitted(width: number(output["width"]), height: number(output["height"]), into: box.width, box.height)
                let linked = images && output["key"] != nil
                let picture: Markup = linked
                    ? Markup(raw: "<a href=\"/jobs/\(job.id)/outputs/\(index)\"><img src=\"/jobs/\(job.id)/outputs/\(index)/thumbnail?box=job\" "
                             + "alt=\"\(HTML.escape(text(output["name"])))\" loading=\"lazy\" width=\"\(shown.width)\" height=\"\(shown.height)\"></a>")
                    : .text("")
                let name: Markup = linked ? HTML.link("/jobs/\(job.id)/outputs/\(index)", text(output["name"])) : .text(text(output["name"]))
                return [picture, name, .text(text(output["format"])),
                 .text("\(text(output["width"]))×\(text(output["height"]))"),
                 .text(output["bytes"].flatMap { if case .number(let n) = $0 { n.intValue } else { nil } }.map(bytes) ?? ""),
                 .text(output["quality"].map(JSONWriter.compact) ?? ""), .text(text(output["location"]))]
            }
            content = content + HTML.element("h2", [], .text("Outputs"))
                + HTML.table(["", "name", "format", "size", "bytes", "quality", "location"], rows, id: "outputs")
        }
        content = content + HTML.element("h2", [], .text("Document")) + HTML.element("pre", [("id", "document")], .text(JSONWriter.pretty(job.payload)))
        // While it may still change, the script reads the page again and replaces this part.
        let refresh: [(String, String)] = !job.state.isLive ? [] : [("data-refresh", "/jobs/\(job.id)"), ("data-every", "\(jobRefreshSeconds)")]
        return HTML.page(title: "Job #\(job.id)", notice: notice, HTML.element("div", [("id", "job")] + refresh, content))
    }

    /// The job a retry was made from: a retry of a job that had no dedupe key carries
    /// `retry:<id>` (the first job of that work); one that had a key keeps it, and then the
    /// queue records no link back.
    static func retryOf(_ job: JobSnapshot) -> JobID? {
        guard let key = job.dedupeKey, key.hasPrefix("retry:"), let original = JobID(key.dropFirst(6)), original != job.id else { return nil }
        return original
    }

    /// A picture's size shown within `maxWidth`×`maxHeight`, never enlarged: the attributes its
    /// `<img>` gets, so its box has its shape before the bytes arrive.
    static func fitted(width: Int?, height: Int?, into maxWidth: Int, _ maxHeight: Int) -> (width: Int, height: Int) {
        guard let width, let height, width > 0, height > 0 else { return (maxWidth, maxHeight) }
        let scale = min(1, Double(maxWidth) / Double(width), Double(maxHeight) / Double(height))
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    static func number(_ value: JSONValue?) -> Int? {
        if case .number(let n)? = value { n.intValue } else { nil }
    }

    static func milliseconds(_ value: JSONValue?) -> Double? {
        if case .number(let n)? = value, n.doubleValue.isFinite { n.doubleValue } else { nil }
    }

    /// Every stage's milliseconds as a bar after the ones before it, in the order the worker
    /// runs them: fetch, header, plan, decode, metadata, faces, then each output's apply and
    /// encode (one after another), then store; what the report's total holds beyond them is
    /// "other", and the total closes the table.
    static func waterfall(_ timings: [JSONMember], outputs: [JSONValue] = []) -> Markup {
        var stages: [(name: String, milliseconds: Double, kind: String)] = []
        var rest = timings.filter { $0.key != "total" }
        func take(_ key: String) {
            guard let index = rest.firstIndex(where: { $0.key == key }) else { return }
            if let value = milliseconds(rest[index].value) { stages.append((key, value, "")) }
            rest.remove(at: index)
        }
        for key in ["fetch", "header", "plan", "decode", "metadata", "faces"] { take(key) }
        for (index, output) in outputs.enumerated() {
            var name = text(output["name"])
            if name.isEmpty { name = "output \(index)" }
            if let width = number(output["breakpointWidth"]) { name += " @\(width)w" }
            if output["reused"] == .bool(true) { name += " (reused)" }
            for (part, kind) in [("apply", ""), ("encode", "encode")] {
                if let value = milliseconds(output["timings"]?[part]) { stages.append(("\(name): \(part)", value, kind)) }
            }
        }
        take("store")
        // Stages a newer worker reports that this page does not know by name, as they come.
        for member in rest { if let value = milliseconds(member.value) { stages.append((member.key, value, "")) } }
        let sum = stages.reduce(0) { $0 + $1.milliseconds }
        let total = timings.first { $0.key == "total" }.flatMap { milliseconds($0.value) }
        if let total, total - sum >= 0.5 { stages.append(("other", total - sum, "")) }
        let scale = max(1, total.map { max($0, sum) } ?? sum)
        var offset = 0.0
        var rows: [[Markup]] = stages.map { name, milliseconds, kind in
            defer { offset += milliseconds }
            let bar = "<svg class=\"bar\" viewBox=\"0 0 100 4\" preserveAspectRatio=\"none\"><rect" + (kind.isEmpty ? "" : " class=\"\(kind)\"")
                + String(format: " x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"4\"></rect></svg>", offset / scale * 100, max(0.2, milliseconds / scale * 100))
            return [.text(name), .text(String(format: "%.1f ms", milliseconds)), Markup(raw: bar)]
        }
        if let total { rows.append([HTML.element("strong", [], .text("total")), HTML.element("strong", [], .text(String(format: "%.1f ms", total))), .text("")]) }
        return HTML.table(["stage", "time", ""], rows, id: "timings")
    }

    /// Failed jobs by the code of their last error, each with its latest examples.
    public static func failures(_ groups: [FailureGroup], examples: [String: [JobSnapshot]], hours: Int, actions: Actions = .readOnly) -> String {
        guard !groups.isEmpty else { return HTML.page(title: "Failures", HTML.element("p", [], .text("No job failed in the last \(hours) h."))) }
        var content = actionNote(actions)
        for group in groups {
            let list = Markup.join((examples[group.code] ?? []).map { job in
                HTML.element("li", [], HTML.link("/jobs/\(job.id)", "#\(job.id)") + .text(" \(source(job)): \(lastError(job)?.detail ?? "")"))
            })
            content = content + HTML.element("section", [("class", "failure-group")],
                HTML.element("h2", [], .text("\(group.code) — \(group.count) job\(group.count == 1 ? "" : "s"), last \(timestamp(group.lastFailedAt))"))
                + HTML.element("ul", [], list)
                + HTML.element("p", [], HTML.link("/jobs?" + HTML.query([("outcome", "failed"), ("code", group.code)]), "All of them"))
                + { if case .allowed(let csrf) = actions {
                        return actionForm("/failures/retry", "Retry all \(group.count)", csrf: csrf, fields: [("code", group.code), ("hours", "\(hours)")],
                                          confirm: "Retry all \(group.count) failed jobs of \(group.code) from the last \(hours) h? "
                                              + "Jobs whose work is already waiting are skipped.")
                    }
                    return Markup(raw: "")
                }())
        }
        return HTML.page(title: "Failures in the last \(hours) h", content)
    }

    public static func notFound(_ what: String, notice: Notice? = nil) -> String {
        HTML.page(title: "Not found", notice: notice, HTML.element("p", [], .text(what)))
    }

    static func source(_ job: JobSnapshot) -> String {
        if case .string(let source)? = job.payload["source"] { return Redacted.url(source) }
        if case .string(let task)? = job.payload["task"] { return "task: \(task)" }
        return "–"
    }

    static func lastError(_ job: JobSnapshot) -> (code: String, detail: String)? {
        guard let entry = job.errors.last else { return nil }
        return (text(entry["code"]), text(entry["detail"]))
    }

    /// Tags as a list (`sale, new`); shown as text, so escaped.
    static func tagList(_ tags: [String]) -> String { tags.joined(separator: ", ") }

    /// Context as `key=value` pairs in key order (`kind=shoes; size=small`); shown as text, so escaped.
    static func contextList(_ pairs: [(String, String)]) -> String {
        pairs.sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: "; ")
    }

    static func text(_ value: JSONValue?) -> String {
        switch value {
        case .string(let text)?: text
        case nil, .null?: ""
        case let other?: JSONWriter.compact(other)
        }
    }
}
