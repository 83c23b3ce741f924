import Foundation

/// Reading the queue for people: lists of jobs and recent throughput.
public protocol QueueInspector: Sendable {
    /// Jobs in `state` (any live state when nil), in `queue` (any when nil): live ones oldest
    /// first, finished ones most recent first.
    func jobs(state: JobState?, queue: String?, limit: Int) throws(DeriveError) -> [JobSnapshot]
    /// Jobs finished since `date`, by outcome.
    func finishedCounts(since date: Date) throws(DeriveError) -> [JobState: Int]
}
