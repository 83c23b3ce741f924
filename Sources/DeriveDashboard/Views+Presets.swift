import DeriveLanguage
import DeriveJobs
import Foundation

/// The presets and schedules pages: versions with what changed between them, how many assets
/// each preset's newest version has not reached yet, reprocessing with its count first, and
/// when each schedule fires.
extension Views {
    public static func presets(_ presets: [StoredPreset], staleness: [PresetStaleness]) -> String {
        guard !presets.isEmpty else {
            return HTML.page(title: "Presets", HTML.element("p", [], .text("No preset is saved (derive preset save NAME FILE saves one).")))
        }
        let byName = Dictionary(staleness.map { ($0.preset, $0) }, uniquingKeysWith: { first, _ in first })
        let rows: [[Markup]] = presets.map { preset in
            let known = byName[preset.name]
            return [HTML.link("/presets/\(preset.name)", preset.name), .text("v\(preset.version)"),
                    .text(preset.retiredAt == nil ? "in use" : "retired"), .text(timestamp(preset.createdAt)),
                    .text(known.map { "\($0.assets)" } ?? "0"), staleCell(known?.stale ?? 0)]
        }
        return HTML.page(title: "Presets", HTML.table(["preset", "newest", "state", "saved", "assets with its outputs", "stale"], rows, id: "presets"))
    }

    static func staleCell(_ stale: Int) -> Markup {
        stale == 0 ? .text("0") : HTML.element("span", [("class", "state-stale")], .text("\(stale)"))
    }

    /// Every version, newest first, each with the lines that changed from the one before.
    public static func preset(_ versions: [StoredPreset], staleness: PresetStaleness?, actions: Actions = .readOnly) -> String {
        guard let newest = versions.first else { return notFound("There is no such preset.") }
        let assets = staleness?.assets ?? 0
        var content = HTML.element("p", [], .text("\(assets) asset\(assets == 1 ? " has" : "s have") outputs of this preset; ")
            + staleCell(staleness?.stale ?? 0) + .text(" of them are from a version older than v\(newest.version)."))
        if newest.retiredAt != nil {
            content = content + HTML.element("p", [("class", "error")], .text("Retired: jobs that name it fail."))
        } else if case .allowed = actions {
            content = content + HTML.element("p", [], HTML.link("/presets/\(newest.name)/reprocess", "Reprocess…"))
        } else {
            content = content + actionNote(actions, to: "reprocess")
        }
        for (index, version) in versions.enumerated() {
            let heading = "v\(version.version), saved \(timestamp(version.createdAt))"
            let text = JSONWriter.pretty(version.outputs)
            let body: Markup
            if index + 1 < versions.count {
                body = diff(from: JSONWriter.pretty(versions[index + 1].outputs), to: text)
                    + HTML.element("details", [], HTML.element("summary", [], .text("Whole document")) + HTML.element("pre", [], .text(text)))
            } else {
                body = HTML.element("pre", [], .text(text))
            }
            content = content + HTML.element("section", [("class", "version")], HTML.element("h2", [], .text(heading)) + body)
        }
        return HTML.page(title: "Preset \(newest.name)", content)
    }

    /// Removed lines red, added green, a few unchanged lines around each change.
    public static func diff(from old: String, to new: String, context: Int = 2) -> Markup {
        let lines = LineDiff.lines(from: old, to: new)
        let changed = lines.indices.filter { if case .same = lines[$0] { false } else { true } }
        guard !changed.isEmpty else { return HTML.element("p", [("class", "note")], .text("The same outputs as the version before.")) }
        var shown = Set<Int>()
        for index in changed { for near in max(0, index - context)...min(lines.count - 1, index + context) { shown.insert(near) } }
        var out = "", last = -1
        for index in shown.sorted() {
            // Each line is a block of its own (the stylesheet says so): no newline between them.
            if last >= 0 && index > last + 1 { out += "<span class=\"gap\">…</span>" }
            switch lines[index] {
            case .same(let line): out += "<span>  \(HTML.escape(line))</span>"
            case .removed(let line): out += "<del>- \(HTML.escape(line))</del>"
            case .added(let line): out += "<ins>+ \(HTML.escape(line))</ins>"
            }
            last = index
        }
        return HTML.element("pre", [("class", "diff")], Markup(raw: out))
    }

    /// The confirmation before reprocessing: how many assets would be derived again, counted
    /// the way `derive reprocess --dry-run` counts, and the form that queues it.
    public static func reprocess(preset: String, version: Int, which: String, matched: Int, actions: Actions) -> String {
        let choices = [("stale", "only assets whose outputs are older than v\(version)"), ("missing", "assets lacking some output of v\(version)"),
                       ("all", "every asset with outputs of this preset")]
        let picker = HTML.element("form", [("method", "get"), ("action", "/presets/\(preset)/reprocess"), ("class", "filter")],
            Markup(raw: "<label>Which <select name=\"which\">" + choices.map { value, label in
                "<option value=\"\(value)\"\(value == which ? " selected" : "")>\(HTML.escape(label))</option>"
            }.joined() + "</select></label> <button>Count</button>"))
        var content = picker + HTML.element("p", [("id", "matched")], .text("\(matched) asset\(matched == 1 ? "" : "s") match."))
        if case .allowed(let csrf) = actions, matched > 0 {
            content = content + HTML.element("p", [], .text("Queues one reprocess task; a worker expands it into one job per asset, below new uploads' priority."))
                + actionForm("/presets/\(preset)/reprocess", "Reprocess \(matched)", csrf: csrf, fields: [("which", which)],
                             confirm: "Reprocess \(matched) asset\(matched == 1 ? "" : "s") with preset \(preset) v\(version)?")
        } else {
            content = content + actionNote(actions, to: "reprocess")
        }
        return HTML.page(title: "Reprocess \(preset)", content)
    }

    public struct ScheduleRow: Sendable {
        public var schedule: Schedule
        public var next: Date?
        public var last: ScheduleFire?
        /// Why the cron text could not be read, if it could not.
        public var problem: String?

        public init(schedule: Schedule, next: Date?, last: ScheduleFire?, problem: String?) {
            self.schedule = schedule
            self.next = next
            self.last = last
            self.problem = problem
        }
    }

    public static func schedules(_ rows: [ScheduleRow], now: Date) -> String {
        guard !rows.isEmpty else {
            return HTML.page(title: "Schedules", HTML.element("p", [], .text("No schedule is saved (derive schedule add saves one).")))
        }
        let cells: [[Markup]] = rows.map { row in
            let schedule = row.schedule
            let next: Markup = !schedule.enabled ? .text("disabled")
                : row.problem.map { HTML.element("span", [("class", "error")], .text($0)) }
                ?? .text(row.next.map { "\(timestamp($0)) (in \(duration($0.timeIntervalSince(now))))" } ?? "never")
            let last: Markup = row.last.map { fire in
                .text("\(timestamp(fire.fireTime)) ") + (fire.jobID.map { HTML.link("/jobs/\($0)", "job #\($0)") } ?? .text("(no job)"))
            } ?? .text("never")
            return [.text(schedule.name), .text("\(schedule.cron) (\(schedule.timeZone))"), .text(task(schedule.action)), next, last]
        }
        return HTML.page(title: "Schedules", HTML.table(["schedule", "when", "what", "next fire", "last fire"], cells, id: "schedules"))
    }

    /// A task document in a few words: `reprocess web (stale)`, `revalidate`.
    static func task(_ action: JSONValue) -> String {
        var words = [text(action["task"])]
        if case .string(let preset)? = action["preset"] { words.append(preset) }
        if case .object(let filter)? = action["filter"], !filter.isEmpty {
            words.append("(" + filter.map { member in member.value == .bool(true) ? member.key : "\(member.key) \(text(member.value))" }.joined(separator: ", ") + ")")
        }
        return words.joined(separator: " ")
    }
}
