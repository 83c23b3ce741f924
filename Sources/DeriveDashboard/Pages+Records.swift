import DeriveLanguage
import DeriveJobs
import DeriveHTTP
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

    /// A derivative as the small picture an asset page shows (`?box=sheet|row`).
    func thumbnail(_ request: HTTPRequest) async -> HTTPResponse {
        await thumbnail(request, name: "derivative") {
            guard let records else { return .missing("This queue keeps no assets, presets or schedules (the in-memory queue).") }
            let text: String? = request.routeParameters["id"]
            guard let id = text.flatMap(Int64.init), let output = try records.derivative(id: id) else { return .missing("There is no such thumbnail.") }
            let record = output.record
            return .found(key: record.storageKey, sha256: record.sha256, fallbackTag: "d\(id)", format: record.format,
                          width: record.width, height: record.height)
        }
    }

    /// A job's output as the small picture its page shows (`?box=job`), as for derivatives.
    func outputThumbnail(_ request: HTTPRequest) async -> HTTPResponse {
        await thumbnail(request, name: "output") {
            let idText: String? = request.routeParameters["id"], indexText: String? = request.routeParameters["index"]
            guard let id = idText.flatMap(Int64.init), let index = indexText.flatMap(Int.init), let job = try database.job(id),
                  case .array(let outputs)? = job.result?["outputs"], outputs.indices.contains(index),
                  case .string(let key)? = outputs[index]["key"] else { return .missing("There is no such output.") }
            func int(_ name: String) -> Int { if case .number(let n)? = outputs[index][name] { n.intValue ?? 0 } else { 0 } }
            func string(_ name: String) -> String { if case .string(let s)? = outputs[index][name] { s } else { "" } }
            return .found(key: key, sha256: string("sha256"), fallbackTag: "j\(id)-\(index)", format: string("format"),
                          width: int("width"), height: int("height"))
        }
    }

    /// Where a thumbnail's picture is, as a page's lookup finds it.
    enum ThumbnailSource {
        case found(key: String, sha256: String, fallbackTag: String, format: String, width: Int, height: Int)
        case missing(String)
    }

    /// A picture made once from the stored object by the thumbnailer, at twice the size shown,
    /// and kept in memory; the output itself when there is no thumbnailer, when it is already
    /// that small, or when it cannot be read as a picture. Its ETag names the output's content
    /// and the box, so a browser asks again with If-None-Match and gets a 304. Thumbnails are
    /// made one at a time on a thread of their own (`ThumbnailCache.make`), never on the
    /// cooperative pool, which on `derive work --dashboard` the worker's own tasks share.
    private func thumbnail(_ request: HTTPRequest, name: String,
                           locate: () throws -> ThumbnailSource) async -> HTTPResponse {
        var pending: (original: [UInt8], format: String, width: Int, height: Int, box: Views.PictureBox, tag: String)?
        var headers = DashboardServer.securityHeaders
        let answer = Self.guarded {
            guard let store, let box = request.query["box"].flatMap(Views.PictureBox.init(rawValue:)) else {
                return Self.respond(Views.notFound("There is no such thumbnail."), status: .notFound)
            }
            let found = try locate()
            guard case .found(let recordedKey, let sha256, let fallbackTag, let format, let width, let height) = found else {
                if case .missing(let why) = found { return Self.respond(Views.notFound(why), status: .notFound) }
                return Self.respond(Views.notFound("There is no such thumbnail."), status: .notFound)
            }
            guard let key = try? StorageKey(recordedKey) else {
                return Self.respond(Views.notFound("The recorded key \(recordedKey) is not one the store can hold."), status: .notFound)
            }
            // The output's content hash (hex, as recorded) and the box: the same tag for the same picture.
            let content = String(sha256.filter { $0.isHexDigit }.prefix(64))
            let tag = "\"\(content.isEmpty ? fallbackTag : content)-\(box.rawValue)\""
            headers[.cacheControl] = "private, max-age=86400"
            headers[HTTPHeader("ETag")] = tag
            if let asked = request.headers[HTTPHeader("If-None-Match")],
               asked.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag }) {
                return HTTPResponse(statusCode: .notModified, headers: headers, body: Data())
            }
            if let cached = thumbnails.get(tag) {
                headers[.contentType] = cached.mediaType
                return HTTPResponse(statusCode: .ok, headers: headers, body: Data(cached.bytes))
            }
            guard let original = try store.get(key) else {
                return Self.respond(Views.notFound("The store no longer has \(recordedKey)."), status: .notFound)
            }
            pending = (original, format, width, height, box, tag)
            return HTTPResponse(statusCode: .ok, headers: headers, body: Data())
        }
        guard let pending else { return answer }
        let mediaType = (OutputFormat(rawValue: pending.format) ?? .jpeg).mediaType
        let bound = pending.box.thumbnail
        var made: (bytes: [UInt8], mediaType: String) = (pending.original, mediaType)
        if let thumbnailer, pending.width > bound.width || pending.height > bound.height {
            do {
                let small = try await thumbnails.make(pending.original, width: bound.width, height: bound.height, with: thumbnailer)
                if small.bytes.count < pending.original.count { made = small }
            } catch {
                logger.warning("dashboard: no thumbnail", metadata: [name: "\(pending.tag)", "error": "\(LogText.oneLine("\(error)"))"])
            }
        }
        thumbnails.put(pending.tag, bytes: made.bytes, mediaType: made.mediaType)
        headers[.contentType] = made.mediaType
        return HTTPResponse(statusCode: .ok, headers: headers, body: Data(made.bytes))
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
