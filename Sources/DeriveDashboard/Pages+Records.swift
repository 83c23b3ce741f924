import DeriveLanguage
import DeriveJobs
import FlyingFox
import Foundation

/// The pages over assets, presets and schedules.
extension Pages {
    /// The records seam, or the page that says this database keeps none.
    func withRecords(_ body: (any DashboardRecords) throws -> HTTPResponse) throws -> HTTPResponse {
        guard let records else {
            return Self.respond(Views.notFound("This queue keeps no assets, presets or schedules (the in-memory queue)."), status: .notFound)
        }
        return try body(records)
    }

    func assets(_ request: HTTPRequest) throws -> HTTPResponse {
        try withRecords { records in
            let cursor = request.query["before"].flatMap(Int64.init)
            return Self.respond(Views.assets(try records.recentAssets(before: cursor, limit: 48, outputsPerAsset: 4), now: Date()))
        }
    }

    func asset(_ request: HTTPRequest) throws -> HTTPResponse {
        try withRecords { records in
            let text: String? = request.routeParameters["id"]
            guard let id = text.flatMap(Int64.init), let asset = try records.asset(id: id) else {
                return Self.respond(Views.notFound("There is no asset \(text ?? "")."), status: .notFound)
            }
            return Self.respond(Views.asset(asset, now: Date()))
        }
    }

    /// A derivative's object, by its row.
    func derivative(_ request: HTTPRequest) throws -> HTTPResponse {
        try withRecords { records in
            let text: String? = request.routeParameters["id"]
            guard let store, let id = text.flatMap(Int64.init), let output = try records.derivative(id: id) else {
                return Self.respond(Views.notFound("There is no such derivative."), status: .notFound)
            }
            return try object(output.record.storageKey, format: OutputFormat(rawValue: output.record.format) ?? .jpeg, from: store)
        }
    }

    func presets() throws -> HTTPResponse {
        try withRecords { records in
            Self.respond(Views.presets(try records.presets(includingRetired: true), staleness: try records.staleness()))
        }
    }

    func preset(_ request: HTTPRequest) throws -> HTTPResponse {
        try withRecords { records in
            let name: String = request.routeParameters["name"] ?? ""
            let versions = Schedule.isValidName(name) ? try records.presetVersions(name) : []
            guard !versions.isEmpty else { return Self.respond(Views.notFound("There is no preset \(name)."), status: .notFound) }
            let staleness = try records.staleness().first { $0.preset == name }
            return Self.respond(Views.preset(versions, staleness: staleness, actions: actions(request)))
        }
    }

    /// The preset and the assets a reprocess would reach (`which`: stale, missing or all).
    func reprocessPlan(_ name: String, which: String?, records: any DashboardRecords) throws -> (plan: ReprocessPlan, which: String, version: Int)? {
        guard Schedule.isValidName(name), let newest = try records.presetVersions(name).first, newest.retiredAt == nil else { return nil }
        let which = ["missing", "all"].contains(which ?? "") ? which! : "stale"
        // "all": every asset with outputs of the preset (the presets page's count), not every asset.
        let filter = AssetFilter(stale: which == "stale", missing: which == "missing", derived: which == "all")
        return (ReprocessPlan(preset: name, filter: filter), which, newest.version)
    }

    func reprocessCount(_ request: HTTPRequest) throws -> HTTPResponse {
        try withRecords { records in
            let name: String = request.routeParameters["name"] ?? ""
            guard let (plan, which, version) = try reprocessPlan(name, which: request.query["which"], records: records) else {
                return Self.respond(Views.notFound("There is no preset \(name) in use."), status: .notFound)
            }
            let matched = try Reprocessor(database: records).count(plan)
            return Self.respond(Views.reprocess(preset: name, version: version, which: which, matched: matched, actions: actions(request)))
        }
    }

    /// Queues one reprocess task (a worker expands it, as it does a schedule's fire): the
    /// request stays one insert however many assets match.
    func reprocess(_ request: HTTPRequest, form: [String: String]) throws -> HTTPResponse {
        guard access.mayAct(request, form: form) else { return refusal() }
        return try withRecords { records in
            let name: String = request.routeParameters["name"] ?? ""
            guard let (plan, which, _) = try reprocessPlan(name, which: form["which"], records: records) else {
                return Self.respond(Views.notFound("There is no preset \(name) in use."), status: .notFound)
            }
            let job = NewJob(payload: plan.taskDocument, queue: plan.queue, priority: plan.priority, dedupeKey: "dashboard-reprocess:\(name):\(which)")
            guard let submitted = try records.submit([job]).first else { return Self.redirect("/presets/\(name)") }
            logger.info("dashboard: reprocess queued", metadata: ["preset": "\(LogText.oneLine(name))", "which": "\(LogText.oneLine("\(which)"))", "job": "\(submitted.id)",
                                                                  "deduplicated": "\(submitted.deduplicated)"])
            return Self.redirect("/jobs/\(submitted.id)?done=" + (submitted.deduplicated ? "reprocess-waiting" : "reprocess-queued"))
        }
    }

    func schedules() throws -> HTTPResponse {
        try withRecords { records in
            let now = Date()
            let rows = try records.schedules().map { schedule throws -> Views.ScheduleRow in
                let last = try records.fires(schedule.name, limit: 1).first
                do {
                    let expression = try CronExpression(schedule.cron, timeZone: schedule.timeZone)
                    return Views.ScheduleRow(schedule: schedule, next: expression.nextFire(after: now), last: last, problem: nil)
                } catch {
                    return Views.ScheduleRow(schedule: schedule, next: nil, last: last, problem: "\(error)")
                }
            }
            return Self.respond(Views.schedules(rows, now: now))
        }
    }
}
