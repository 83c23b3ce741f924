import DeriveLanguage
import DeriveDigest
import Foundation

/// Turns a reprocess or revalidation plan into jobs: it walks the matching assets (or
/// sources) in pages, and enqueues a batch per page — each job deduplicated, so running the
/// same plan twice while the first one's jobs wait enqueues nothing new; below new
/// submissions' priority; and spread in time, so a million assets do not starve live uploads.
/// `derive reprocess` and `derive revalidate` run it directly, a schedule's task in a worker.
public struct Reprocessor: Sendable {
    public let database: any JobStore & ReprocessStore

    public init(database: any JobStore & ReprocessStore) {
        self.database = database
    }

    public struct Summary: Sendable, Equatable {
        /// Assets (or sources) that matched.
        public var matched = 0
        /// New jobs, and jobs that were already waiting.
        public var enqueued = 0
        public var deduplicated = 0
        public var batches = 0

        public var json: JSONValue {
            .object(["matched": .int(matched), "enqueued": .int(enqueued), "deduplicated": .int(deduplicated), "batches": .int(batches)])
        }
    }

    /// How many assets (or sources) match, without enqueuing anything.
    public func count(_ plan: ReprocessPlan) throws(DeriveError) -> Int {
        var summary = Summary()
        try walk(plan) { page throws(DeriveError) in summary.matched += page.count }
        return summary.matched
    }

    public func enqueue(_ plan: ReprocessPlan, start: Date = Date(), progress: (Summary) -> Void = { _ in }) throws(DeriveError) -> Summary {
        var summary = Summary()
        var random = SystemRandomNumberGenerator()
        try walk(plan) { page throws(DeriveError) in
            let jobs = page.map { candidate in
                let index = summary.matched
                summary.matched += 1
                return NewJob(payload: Self.document(for: candidate, plan: plan), queue: plan.queue, priority: plan.priority,
                              runAt: plan.runAt(index, start: start, using: &random), maxAttempts: plan.maxAttempts,
                              dedupeKey: Self.dedupeKey(for: candidate, plan: plan))
            }
            let results = try database.submit(jobs)
            summary.deduplicated += results.filter(\.deduplicated).count
            summary.enqueued += results.filter { !$0.deduplicated }.count
            summary.batches += 1
            progress(summary)
        }
        return summary
    }

    /// Pages of matching candidates, host-filtered.
    private func walk(_ plan: ReprocessPlan, _ body: ([SourceCandidate]) throws(DeriveError) -> Void) throws(DeriveError) {
        var cursor: Int64 = 0
        while true {
            let page: [SourceCandidate]
            if let preset = plan.preset {
                page = try database.reprocessCandidates(preset: preset, filter: plan.filter, after: cursor, limit: plan.batchSize)
            } else {
                page = try database.revalidationCandidates(filter: plan.filter, after: cursor, limit: plan.batchSize)
            }
            guard let last = page.last else { return }
            cursor = last.position
            let matching = page.filter { plan.filter.hostMatches($0.source) }
            if !matching.isEmpty { try body(matching) }
        }
    }

    static func document(for candidate: SourceCandidate, plan: ReprocessPlan) -> JSONValue {
        if let preset = plan.preset {
            // The asset's tags and context go with it, so its conditions take the branches they took.
            return .object([JSONMember(key: "version", value: .int(1)), JSONMember(key: "source", value: .string(candidate.source)),
                            JSONMember(key: "preset", value: .string(preset))] + candidate.asset.documentMembers)
        }
        return .object(["version": .int(1), "task": .string(JobTask.checkSource.rawValue), "source": .string(candidate.source)])
    }

    /// One waiting job per asset and preset (or per source checked).
    static func dedupeKey(for candidate: SourceCandidate, plan: ReprocessPlan) -> String {
        let sourceHash = { ContentHash.sha256(Array(candidate.source.utf8)) }
        if let preset = plan.preset { return "reprocess:\(preset):\(candidate.assetSHA256 ?? sourceHash())" }
        return "check-source:" + sourceHash()
    }
}
