import Foundation

/// Which assets a reprocess or revalidation is about. Empty means every asset.
public struct AssetFilter: Sendable, Equatable {
    public var createdBefore: Date?
    public var createdAfter: Date?
    /// Sources on this host (or its subdomains).
    public var sourceHost: String?
    /// With a preset: only assets whose newest outputs of it are from an older version.
    public var stale = false
    /// With a preset: only assets lacking some output of its current version.
    public var missing = false
    /// Only sources not checked with their origin since this time (revalidation).
    public var checkedBefore: Date?

    public init(createdBefore: Date? = nil, createdAfter: Date? = nil, sourceHost: String? = nil, stale: Bool = false, missing: Bool = false,
                checkedBefore: Date? = nil) {
        self.createdBefore = createdBefore
        self.createdAfter = createdAfter
        self.sourceHost = sourceHost
        self.stale = stale
        self.missing = missing
        self.checkedBefore = checkedBefore
    }

    /// Whether `url`'s host is `sourceHost` or below it (`images.example.com` for `example.com`).
    public func hostMatches(_ url: String) -> Bool {
        guard let wanted = sourceHost?.lowercased() else { return true }
        guard let host = URLComponents(string: url)?.host?.lowercased() else { return false }
        return host == wanted || host.hasSuffix("." + wanted)
    }

    public var json: JSONValue {
        var members: [JSONMember] = []
        if let createdBefore { members.append(JSONMember(key: "createdBefore", value: .decimal(createdBefore.timeIntervalSince1970))) }
        if let createdAfter { members.append(JSONMember(key: "createdAfter", value: .decimal(createdAfter.timeIntervalSince1970))) }
        if let sourceHost { members.append(JSONMember(key: "sourceHost", value: .string(sourceHost))) }
        if stale { members.append(JSONMember(key: "stale", value: .bool(true))) }
        if missing { members.append(JSONMember(key: "missing", value: .bool(true))) }
        if let checkedBefore { members.append(JSONMember(key: "checkedBefore", value: .decimal(checkedBefore.timeIntervalSince1970))) }
        return .object(members)
    }

    public init(json: JSONValue?) throws(ValidationError) {
        self.init()
        guard let json else { return }
        guard case .object = json else { throw ValidationError(location: "filter", reason: "must be an object") }
        func date(_ key: String) throws(ValidationError) -> Date? {
            switch json[key] {
            case nil, .null?: return nil
            case .number(let number)?: return Date(timeIntervalSince1970: number.doubleValue)
            default: throw ValidationError(location: "filter.\(key)", reason: "must be seconds since 1970")
            }
        }
        createdBefore = try date("createdBefore")
        createdAfter = try date("createdAfter")
        checkedBefore = try date("checkedBefore")
        if case .string(let host)? = json["sourceHost"] { sourceHost = host }
        stale = json["stale"] == .bool(true)
        missing = json["missing"] == .bool(true)
    }
}

/// How a reprocess or revalidation is queued.
public struct ReprocessPlan: Sendable, Equatable {
    /// The preset to derive again (reprocess); nil for a revalidation.
    public var preset: String?
    public var filter: AssetFilter
    public var queue: String
    /// Below new submissions' 0 by default, so live uploads go first.
    public var priority: Int
    public var maxAttempts: Int
    /// Spread the jobs' run-at over this many seconds at random (jitter)...
    public var spread: Double?
    /// ...or at this many jobs per second.
    public var rate: Double?
    public var batchSize: Int

    public static let defaultPriority = -10

    public init(preset: String?, filter: AssetFilter = AssetFilter(), queue: String = "default", priority: Int = ReprocessPlan.defaultPriority,
                maxAttempts: Int = 5, spread: Double? = nil, rate: Double? = nil, batchSize: Int = 1000) {
        self.preset = preset
        self.filter = filter
        self.queue = queue
        self.priority = priority
        self.maxAttempts = maxAttempts
        self.spread = spread
        self.rate = rate
        self.batchSize = batchSize
    }

    /// When the `index`-th job runs, for a plan started at `start`.
    public func runAt<R: RandomNumberGenerator>(_ index: Int, start: Date, using random: inout R) -> Date? {
        if let rate, rate > 0 { return start.addingTimeInterval(Double(index) / rate) }
        if let spread, spread > 0 { return start.addingTimeInterval(Double.random(in: 0..<spread, using: &random)) }
        return nil
    }

    /// The task document a schedule enqueues, which a worker expands.
    public var taskDocument: JSONValue {
        var members: [JSONMember] = [
            JSONMember(key: "version", value: .int(1)),
            JSONMember(key: "task", value: .string(preset == nil ? "revalidate" : "reprocess")),
        ]
        if let preset { members.append(JSONMember(key: "preset", value: .string(preset))) }
        members += [
            JSONMember(key: "filter", value: filter.json), JSONMember(key: "queue", value: .string(queue)),
            JSONMember(key: "priority", value: .int(priority)), JSONMember(key: "maxAttempts", value: .int(maxAttempts)),
        ]
        if let spread { members.append(JSONMember(key: "spread", value: .decimal(spread))) }
        if let rate { members.append(JSONMember(key: "rate", value: .decimal(rate))) }
        return .object(members)
    }

    /// Reads a task document back.
    public init(task document: JSONValue) throws(ValidationError) {
        guard case .string(let task)? = document["task"], task == "reprocess" || task == "revalidate" else {
            throw ValidationError(location: "task", reason: "must be reprocess or revalidate")
        }
        var preset: String?
        if task == "reprocess" {
            guard case .string(let name)? = document["preset"] else { throw ValidationError(location: "preset", reason: "a reprocess needs a preset") }
            preset = name
        }
        func int(_ key: String, _ fallback: Int) -> Int {
            if case .number(let number)? = document[key], let value = number.intValue { return value }
            return fallback
        }
        func double(_ key: String) -> Double? {
            if case .number(let number)? = document[key] { return number.doubleValue }
            return nil
        }
        var queue = "default"
        if case .string(let name)? = document["queue"] { queue = name }
        var filter = try AssetFilter(json: document["filter"])
        // A schedule's revalidation looks back from the moment it fires.
        if case .number(let age)? = document["checkedAge"] { filter.checkedBefore = Date().addingTimeInterval(-age.doubleValue) }
        self.init(preset: preset, filter: filter, queue: queue,
                  priority: int("priority", Self.defaultPriority), maxAttempts: int("maxAttempts", 5), spread: double("spread"),
                  rate: double("rate"))
    }
}

/// A source to derive again or to check: the asset it last held, if any.
public struct SourceCandidate: Sendable, Equatable {
    /// Keyset position: the asset's (or source's) row id.
    public var position: Int64
    public var source: String
    public var assetSHA256: String?

    public init(position: Int64, source: String, assetSHA256: String?) {
        self.position = position
        self.source = source
        self.assetSHA256 = assetSHA256
    }
}

/// What the database knows about a source URL.
public struct SourceState: Sendable, Equatable {
    public var url: String
    public var assetSHA256: String
    public var version: Int
    public var etag: String?
    public var lastModified: String?
    public var checkedAt: Date

    public init(url: String, assetSHA256: String, version: Int, etag: String?, lastModified: String?, checkedAt: Date) {
        self.url = url
        self.assetSHA256 = assetSHA256
        self.version = version
        self.etag = etag
        self.lastModified = lastModified
        self.checkedAt = checkedAt
    }
}

/// How current a preset's outputs are.
public struct PresetStaleness: Sendable, Equatable {
    public var preset: String
    public var currentVersion: Int
    /// Assets with outputs of the preset, and those whose newest outputs are older than
    /// its current version.
    public var assets: Int
    public var stale: Int

    public init(preset: String, currentVersion: Int, assets: Int, stale: Int) {
        self.preset = preset
        self.currentVersion = currentVersion
        self.assets = assets
        self.stale = stale
    }
}

/// An output replaced by a newer one, for the superseded-outputs policy.
public struct SupersededOutput: Sendable, Equatable {
    public var id: Int64
    public var storageKey: String

    public init(id: Int64, storageKey: String) {
        self.id = id
        self.storageKey = storageKey
    }
}

/// Finding what to derive again, and keeping sources and outputs current.
public protocol ReprocessStore: Sendable {
    /// Assets matching the filter (with `preset` for `stale` and `missing`), by id after
    /// `cursor`: their source URL and content hash. Host filtering is the caller's.
    func reprocessCandidates(preset: String?, filter: AssetFilter, after cursor: Int64, limit: Int) throws(DeriveError) -> [SourceCandidate]
    /// Sources (by row) matching the filter, for revalidation.
    func revalidationCandidates(filter: AssetFilter, after cursor: Int64, limit: Int) throws(DeriveError) -> [SourceCandidate]
    func source(_ url: String) throws(DeriveError) -> SourceState?
    /// The origin confirmed the source unchanged: new validators, checked now.
    func sourceUnchanged(_ url: String, etag: String?, lastModified: String?) throws(DeriveError)
    /// The presets (and preset-less chains) the asset's current outputs were made with.
    func derivationsOf(assetSHA256: String) throws(DeriveError) -> (presets: [String], outputs: [JSONValue])
    func staleness() throws(DeriveError) -> [PresetStaleness]
    /// Superseded outputs whose objects no other current output uses, oldest first.
    func supersededOutputs(limit: Int) throws(DeriveError) -> [SupersededOutput]
    func deleteDerivatives(_ ids: [Int64]) throws(DeriveError)
}

/// Schedules kept in the database, and their fires.
public protocol ScheduleStore: Sendable {
    /// Adds a schedule, or replaces the one with that name (which then counts as new: missed
    /// fires before now are not caught up).
    func saveSchedule(_ schedule: Schedule) throws(DeriveError)
    func schedules() throws(DeriveError) -> [Schedule]
    func removeSchedule(_ name: String) throws(DeriveError) -> Bool
    /// Records the fire of `name` at `fireTime` and enqueues `job`, in one transaction; nil
    /// when that fire is already recorded (another worker got there first).
    func fire(_ name: String, at fireTime: Date, job: NewJob) throws(DeriveError) -> JobID?
    func fires(_ name: String, limit: Int) throws(DeriveError) -> [ScheduleFire]
}

public struct Schedule: Sendable, Equatable {
    public var name: String
    public var cron: String
    public var timeZone: String
    /// A task document (`ReprocessPlan.taskDocument`).
    public var action: JSONValue
    public var enabled: Bool
    public var createdAt: Date

    public init(name: String, cron: String, timeZone: String, action: JSONValue, enabled: Bool = true, createdAt: Date = Date()) {
        self.name = name
        self.cron = cron
        self.timeZone = timeZone
        self.action = action
        self.enabled = enabled
        self.createdAt = createdAt
    }

    /// The job a fire at `fireTime` enqueues: the task, marked with the schedule and the fire,
    /// deduplicated so a fire does not stack on one whose task is still waiting.
    public func job(firedAt fireTime: Date) throws(ValidationError) -> NewJob {
        let plan = try ReprocessPlan(task: action)
        var document = action
        if case .object(var members) = document {
            members.append(JSONMember(key: "schedule", value: .string(name)))
            members.append(JSONMember(key: "fireTime", value: .decimal(fireTime.timeIntervalSince1970)))
            document = .object(members)
        }
        return NewJob(payload: document, queue: plan.queue, priority: plan.priority, dedupeKey: "schedule:\(name)")
    }

    /// Schedule and preset names: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with a dot.
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.first, first != ".", name.count <= 64 else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
    }

    /// The fire due now: the latest cron time at or before `now`, if it is not before the
    /// schedule existed. Only the latest is due, so fires missed while no worker ran are
    /// caught up once, not once each.
    public func dueFire(at now: Date) throws(ValidationError) -> Date? {
        let expression = try CronExpression(cron, timeZone: timeZone)
        guard let fire = expression.previousFire(atOrBefore: now), fire >= createdAt.addingTimeInterval(-1) else { return nil }
        return fire
    }
}

public struct ScheduleFire: Sendable, Equatable {
    public var fireTime: Date
    public var firedAt: Date
    public var jobID: JobID?

    public init(fireTime: Date, firedAt: Date, jobID: JobID?) {
        self.fireTime = fireTime
        self.firedAt = firedAt
        self.jobID = jobID
    }
}
