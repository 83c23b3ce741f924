import DeriveLanguage
import Foundation

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
