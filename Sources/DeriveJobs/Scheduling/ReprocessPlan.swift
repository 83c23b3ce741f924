import DeriveLanguage
import Foundation

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
            JSONMember(key: "task", value: .string((preset == nil ? JobTask.revalidate : .reprocess).rawValue)),
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
        guard case .string(let name)? = document["task"], let task = JobTask(rawValue: name), task != .checkSource else {
            throw ValidationError(location: "task", reason: "must be reprocess or revalidate")
        }
        var preset: String?
        if task == .reprocess {
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
