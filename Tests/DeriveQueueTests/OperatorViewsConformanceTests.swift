import DeriveLanguage
import DeriveJobs
import DerivePostgres
import DeriveTestSupport
import Foundation
import Testing

/// What the operator's views read (`QueueInspector`), one set of semantics on the three
/// stores: finished jobs paged newest first by keyset and narrowed by outcome, queue, error
/// code, source host and time; failures grouped by code; throughput by interval.
@Suite struct OperatorViewsConformanceTests {
    @Test(.enabled(if: TestServers.postgresAvailable, "the PostgreSQL cases of this suite need the PostgreSQL Scripts/test.sh starts"))
    func postgresCasesRun() {
        #expect(JobStoreKind.runnable.contains(.postgres))
    }

    /// Completes `count` jobs in one batch (one transaction: one finishing instant for all).
    static func complete(_ store: any JobStore, count: Int, queue: String = "default", source: String = "https://images.example/a.jpg") throws -> [JobID] {
        let ids = try store.submit((0..<count).map { _ in NewJob(payload: document(source), queue: queue) }).map(\.id)
        let runs = try store.claim(queues: [queue], limit: count, owner: "w", lease: 30).map(\.run)
        #expect(try store.complete(runs.map { Completion(run: $0) }) == Set(ids))
        return ids
    }

    static func fail(_ store: any JobStore, _ error: DeriveError, queue: String = "default", source: String = "https://images.example/a.jpg") throws -> JobID {
        let id = try #require(try store.submit([NewJob(payload: document(source), queue: queue, maxAttempts: 1)]).first).id
        let run = try #require(try store.claim(queues: [queue], limit: 1, owner: "w", lease: 30).first).run
        #expect(try store.fail([Failure(run: run, error: error)], policy: retryAtOnce) == [id: .failed])
        return id
    }

    @Test(arguments: JobStoreKind.runnable)
    func finishedJobsArePagedNewestFirstByKeyset(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind)
        // Two batches: four jobs finishing at one instant (the tie is broken by id), then three.
        let first = try Self.complete(queue.store, count: 4)
        Thread.sleep(forTimeInterval: 0.01)
        let second = try Self.complete(queue.store, count: 3)
        let newestFirst = (second + first).sorted { a, b in second.contains(a) == second.contains(b) ? a > b : second.contains(a) }
        var seen: [JobID] = [], cursor: JobCursor?, pages = 0
        repeat {
            let page = try queue.store.finishedJobs(JobFilter(), after: cursor, limit: 3)
            #expect(page.jobs.allSatisfy { $0.state == .completed && $0.finishedAt != nil })
            seen += page.jobs.map(\.id)
            cursor = page.next
            pages += 1
        } while cursor != nil && pages < 10
        #expect(seen == newestFirst, "\(seen) vs \(newestFirst)")
        #expect(pages == 3)
    }

    @Test(arguments: JobStoreKind.runnable)
    func filtersNarrowByOutcomeQueueErrorCodeHostAndTime(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind), store = queue.store
        let onCDN = try Self.complete(store, count: 2, source: "https://Images.Example.com:8443/a.jpg?w=1")
        let inBucket = try Self.complete(store, count: 1, queue: "bulk", source: "s3://media-bucket/originals/b.jpg")
        let withUser = try Self.complete(store, count: 1, source: "https://user:secret@other.example/c.jpg")
        let unavailable = try Self.fail(store, DeriveError(.sourceUnavailable, "origin answered 503"))
        let refused = try Self.fail(store, DeriveError(.sourceRefused, "a private address"), queue: "bulk", source: "/local/d.jpg")

        func ids(_ filter: JobFilter) throws -> Set<JobID> { Set(try store.finishedJobs(filter, after: nil, limit: 50).jobs.map(\.id)) }
        #expect(try ids(JobFilter()).count == 6)
        #expect(try ids(JobFilter(outcome: .failed)) == [unavailable, refused])
        #expect(try ids(JobFilter(outcome: .completed, queue: "bulk")) == Set(inBucket))
        #expect(try ids(JobFilter(queue: "bulk")) == Set(inBucket + [refused]))
        #expect(try ids(JobFilter(errorCode: "source_unavailable")) == [unavailable])
        #expect(try ids(JobFilter(sourceHost: "images.example.com")) == Set(onCDN))
        #expect(try ids(JobFilter(sourceHost: "IMAGES.example.com")) == Set(onCDN))
        #expect(try ids(JobFilter(sourceHost: "media-bucket")) == Set(inBucket))
        #expect(try ids(JobFilter(sourceHost: "other.example")) == Set(withUser))
        #expect(try ids(JobFilter(sourceHost: "images.example")) == [unavailable])
        #expect(try ids(JobFilter(outcome: .failed, sourceHost: "images.example")) == [unavailable])
        // Text the source contains, as written (the dashboard's search).
        #expect(try ids(JobFilter(sourceContains: "originals/b.jpg")) == Set(inBucket))
        #expect(try ids(JobFilter(sourceContains: "Images.Example")) == Set(onCDN))
        #expect(try ids(JobFilter(sourceContains: "/local/d")) == [refused])
        #expect(try ids(JobFilter(outcome: .completed, sourceContains: "/local/d")).isEmpty)
        #expect(try ids(JobFilter(sourceContains: "%_'")).isEmpty)
        #expect(try ids(JobFilter(finishedSince: Date().addingTimeInterval(3600))).isEmpty)
        #expect(try ids(JobFilter(finishedSince: Date().addingTimeInterval(-3600))).count == 6)
    }

    @Test(arguments: JobStoreKind.runnable)
    func failuresAreGroupedByTheirLastErrorsCode(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind), store = queue.store
        _ = try Self.complete(store, count: 2)
        for _ in 0..<3 { _ = try Self.fail(store, DeriveError(.sourceUnavailable, "origin answered 503")) }
        _ = try Self.fail(store, DeriveError(.corruptImage, "truncated"))
        let groups = try store.failureGroups(since: Date().addingTimeInterval(-3600))
        #expect(groups.map(\.code) == ["source_unavailable", "corrupt_image"] && groups.map(\.count) == [3, 1])
        #expect(groups.allSatisfy { abs($0.lastFailedAt.timeIntervalSinceNow) < 60 })
        #expect(try store.failureGroups(since: Date().addingTimeInterval(3600)).isEmpty)
    }

    @Test(arguments: JobStoreKind.runnable)
    func throughputCountsEachOutcomeByInterval(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind), store = queue.store
        _ = try Self.complete(store, count: 3)
        _ = try Self.fail(store, DeriveError(.sourceUnavailable, "origin answered 503"))
        let buckets = try store.throughput(since: Date().addingTimeInterval(-3600), bucket: 60)
        #expect(!buckets.isEmpty && buckets.count <= 2)
        #expect(buckets.reduce(0) { $0 + ($1.counts[.completed] ?? 0) } == 3)
        #expect(buckets.reduce(0) { $0 + ($1.counts[.failed] ?? 0) } == 1)
        #expect(buckets.allSatisfy { Int($0.start.timeIntervalSince1970) % 60 == 0 && abs($0.start.timeIntervalSinceNow) < 180 })
        #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.start < $1.start })
    }

    /// A finished job keeps the worker that ran its last attempt and when that attempt
    /// started (the job's page shows both after it ended); a job cancelled while it waited has
    /// no worker.
    @Test(arguments: JobStoreKind.runnable)
    func finishedJobsKeepTheirWorkerAndStart(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind), store = queue.store
        let before = Date().addingTimeInterval(-2)
        let ids = try store.submit([NewJob(payload: document(), maxAttempts: 1), NewJob(payload: document(), maxAttempts: 1), NewJob(payload: document())]).map(\.id)
        let runs = try store.claim(queues: ["default"], limit: 2, owner: "host-a:1:abc", lease: 30).map(\.run)
        let running = try #require(try store.job(runs[0].id))
        #expect(running.worker == "host-a:1:abc" && running.startedAt.map { $0 >= before && $0 <= Date().addingTimeInterval(2) } == true)
        #expect(try store.complete([Completion(run: runs[0])]) == [runs[0].id])
        #expect(try store.fail([Failure(run: runs[1], error: DeriveError(.corruptImage, "truncated"))], policy: retryAtOnce) == [runs[1].id: .failed])
        let waiting = try #require(ids.first { !runs.map(\.id).contains($0) })
        #expect(try store.cancel(waiting) == .cancelled)
        for run in runs {
            let job = try #require(try store.job(run.id))
            #expect(!job.state.isLive && job.worker == "host-a:1:abc", "\(kind): job \(run.id) lost its worker: \(job)")
            let started = try #require(job.startedAt, "\(kind): job \(run.id) lost its start")
            #expect(started >= before && started <= (job.finishedAt ?? .distantPast).addingTimeInterval(0.001))
        }
        let cancelled = try #require(try store.job(waiting))
        #expect(cancelled.state == .cancelled && cancelled.worker == nil && cancelled.startedAt == nil)
        // The lists read the same columns.
        let listed = try store.finishedJobs(JobFilter(outcome: .completed), after: nil, limit: 5).jobs
        #expect(listed.map(\.worker) == ["host-a:1:abc"] && listed.first?.startedAt != nil)
    }

    /// The generations of one piece of work, by dedupe key: the retries of a job with no key
    /// carry `retry:<id>`, live and archived alike, oldest first.
    @Test(arguments: JobStoreKind.runnable)
    func theRetriesOfAJobAreFoundByItsRetryKey(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind), store = queue.store
        let original = try Self.fail(store, DeriveError(.sourceUnavailable, "origin answered 503"))
        let unrelated = try Self.fail(store, DeriveError(.sourceUnavailable, "origin answered 503"))
        let first = try #require(try store.retry(original))
        let run = try #require(try store.claim(queues: ["default"], limit: 1, owner: "w", lease: 30).first).run
        #expect(run.id == first)
        #expect(try store.fail([Failure(run: run, error: DeriveError(.sourceUnavailable, "again"))], policy: retryAtOnce) == [first: .failed])
        // The retry of the retry carries the first one's key: one piece of work.
        let second = try #require(try store.retry(first))
        #expect(try store.jobs(dedupeKey: "retry:\(original)", limit: 10).map(\.id) == [first, second])
        #expect(try store.jobs(dedupeKey: "retry:\(original)", limit: 1).map(\.id) == [first])
        #expect(try store.jobs(dedupeKey: "retry:\(original)", limit: 10).map(\.state) == [.failed, .available])
        #expect(try store.jobs(dedupeKey: "retry:\(unrelated)", limit: 10).isEmpty)
        #expect(try store.jobs(dedupeKey: "retry:%", limit: 10).isEmpty)
    }

    /// Totals per queue, per worker and per outcome, in buckets: what the totals page draws.
    @Test(arguments: JobStoreKind.runnable)
    func totalsCountByQueueWorkerAndOutcome(kind: JobStoreKind) throws {
        let queue = try JobStoreUnderTest(kind), store = queue.store
        func run(_ count: Int, queue name: String, owner: String, failing: Bool = false) throws {
            _ = try store.submit((0..<count).map { _ in NewJob(payload: document(), queue: name, maxAttempts: 1) })
            let runs = try store.claim(queues: [name], limit: count, owner: owner, lease: 30).map(\.run)
            #expect(runs.count == count)
            if failing {
                _ = try store.fail(runs.map { Failure(run: $0, error: DeriveError(.corruptImage, "truncated")) }, policy: retryAtOnce)
            } else {
                _ = try store.complete(runs.map { Completion(run: $0) })
            }
        }
        try run(3, queue: "default", owner: "w1")
        try run(2, queue: "bulk", owner: "w1")
        try run(1, queue: "bulk", owner: "w2", failing: true)
        let waiting = try #require(try store.submit([NewJob(payload: document(), queue: "bulk")]).first).id
        #expect(try store.cancel(waiting) == .cancelled)
        let totals = try store.finishedTotals(since: Date().addingTimeInterval(-3600), bucket: 3600, limit: 100)
        var sums: [String: Int] = [:]
        for total in totals { sums["\(total.queue) \(total.worker ?? "-") \(total.outcome.rawValue)", default: 0] += total.jobs }
        #expect(sums == ["default w1 completed": 3, "bulk w1 completed": 2, "bulk w2 failed": 1, "bulk - cancelled": 1], "\(kind): \(sums)")
        #expect(totals.allSatisfy { Int($0.start.timeIntervalSince1970) % 3600 == 0 && abs($0.start.timeIntervalSinceNow) <= 7200 })
        // Bounded: newest buckets first, at most `limit` groups.
        #expect(try store.finishedTotals(since: Date().addingTimeInterval(-3600), bucket: 3600, limit: 2).count == 2)
        #expect(try store.finishedTotals(since: Date().addingTimeInterval(3600), bucket: 60, limit: 100).isEmpty)
    }

    /// The host rule is written twice, in Swift (the in-memory queue, SQLite's function) and
    /// in PostgreSQL's `derive.source_host` (which the archive is indexed by): both agree.
    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func postgresAndSwiftAgreeOnEverySourcesHost() throws {
        let queue = try TestQueue(.postgres)
        let connection = try queue.sql()
        let sources = [
            "https://Images.Example.com:8443/a.jpg?w=1", "http://example.com", "https://user:pw@host.example/x", "s3://bucket/key.jpg",
            "HTTP://EXAMPLE.ORG#frag", "https://[2001:db8::1]:8080/a", "https://example.com?x=1", "file:///srv/a.jpg", "/srv/a.jpg",
            "data:image/png;base64,AAAA", "photos/a.jpg", "ftp://files.example/a", "1http://x.example/", "https://@/",
        ]
        for source in sources {
            let fromPostgres = try connection.query("SELECT derive.source_host($1)", [source]).scalar
            #expect(fromPostgres == SourceAddress.host(of: source), "\(source)")
        }
    }
}

/// No listing of finished jobs scans the archive: each filter, alone and after a cursor, has
/// an index path in (finished_at, id) order and needs no sort (checked with sequential scans
/// priced out, on an archive of a few thousand rows). This caught `ORDER BY finished_at`
/// meaning the selected `extract(epoch …) AS finished_at`, which no index serves.
@Suite struct OperatorViewsPlanTests {
    @Test(.enabled(if: TestServers.postgresAvailable, "needs the PostgreSQL Scripts/test.sh starts"))
    func everyFilterReadsTheArchiveThroughAnIndex() throws {
        let queue = try TestQueue(.postgres)
        let sql = try queue.sql()
        try sql.execute("""
            INSERT INTO derive.job_archive (id, queue, outcome, priority, attempt, max_attempts, payload, errors, created_at, finished_at)
            SELECT g, CASE WHEN g % 3 = 0 THEN 'bulk' ELSE 'default' END, CASE WHEN g % 5 = 0 THEN 'failed' ELSE 'completed' END, 0, 1, 5,
                   jsonb_build_object('version', 1, 'source', 'https://host' || (g % 20) || '.example/' || g || '.jpg'),
                   CASE WHEN g % 5 = 0 THEN '[{"code": "source_unavailable"}]'::jsonb ELSE '[]'::jsonb END,
                   now() - g * interval '1 second', now() - g * interval '1 second'
            FROM generate_series(1, 5000) AS g;
            ANALYZE derive.job_archive;
            """)
        let cursor = JobCursor(finishedAt: Date().addingTimeInterval(-100), id: 100)
        let filters = [JobFilter(), JobFilter(outcome: .failed), JobFilter(queue: "bulk"), JobFilter(errorCode: "source_unavailable"),
                       JobFilter(sourceHost: "host7.example"), JobFilter(finishedSince: Date().addingTimeInterval(-60))]
        for filter in filters {
            for after in [nil, cursor] {
                let (query, values) = PostgresJobStore.finishedJobsQuery(filter, after: after, limit: 50)
                let plan = try sql.transaction { () throws(PostgresError) in
                    try sql.execute("SET LOCAL enable_seqscan = off")
                    return try sql.query("EXPLAIN " + query, values).rows.compactMap { $0.first ?? nil }.joined(separator: "\n")
                }
                #expect(!plan.contains("Seq Scan"), "\(filter) after \(String(describing: after)):\n\(plan)")
                #expect(plan.contains("Index"), "\(filter):\n\(plan)")
                // Rows come in the index's order: no sort of every matching row before the limit (an
                // incremental sort of rows presorted by time, ordering ties by id, is fine).
                let sorts = plan.split(separator: "\n").filter { $0.hasPrefix("Sort ") || $0.contains("->  Sort ") }
                #expect(sorts.isEmpty, "\(filter) after \(String(describing: after)):\n\(plan)")
            }
        }
        // The totals page reads its window from the totals index alone, and a job's page finds
        // the generations of its work by the dedupe indexes.
        let plans = try [(PostgresJobStore.finishedTotalsSQL, [String(Date().addingTimeInterval(-3600).timeIntervalSince1970), "60", "20000"] as [String?],
                          "job_archive_totals"),
                         (PostgresJobStore.generationsSQL, ["retry:7", "22"] as [String?], "job_archive_dedupe")].map { query, values, index in
            (index, try sql.transaction { () throws(PostgresError) in
                try sql.execute("SET LOCAL enable_seqscan = off")
                return try sql.query("EXPLAIN " + query, values).rows.compactMap { $0.first ?? nil }.joined(separator: "\n")
            })
        }
        for (index, plan) in plans {
            #expect(!plan.contains("Seq Scan") && plan.contains("Index"), "\(index):\n\(plan)")
        }
    }
}
