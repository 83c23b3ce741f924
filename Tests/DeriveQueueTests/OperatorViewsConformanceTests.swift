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
    }
}
