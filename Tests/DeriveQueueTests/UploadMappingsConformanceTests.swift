import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// `derive serve`'s upload mappings (`UploadMappings`, issue 39) on the three stores: create
/// once, update and delete only what exists, pages in byte order, clouds apart, and the
/// deepest mapped folder of a public id.
@Suite struct UploadMappingsConformanceTests {
    @Test(.enabled(if: TestServers.postgresAvailable, "the PostgreSQL cases of this suite need the PostgreSQL Scripts/test.sh starts"))
    func postgresCasesRun() {
        #expect(JobStoreKind.runnable.contains(.postgres))
    }

    static func store(_ kind: JobStoreKind) throws -> (any UploadMappings, TestQueue?) {
        switch kind {
        case .memory: return (MemoryJobQueue(), nil)
        case .sqlite, .postgres:
            let database = try TestQueue(kind == .sqlite ? .sqlite : .postgres)
            return (database.store, database)
        }
    }

    @Test(arguments: JobStoreKind.runnable)
    func mappingsAreCreatedOnceChangedListedAndForgotten(kind: JobStoreKind) throws {
        let (store, database) = try Self.store(kind)
        defer { _ = database }
        let a = UploadMapping(folder: "remote", template: "https://a.example/")
        #expect(try store.createUploadMapping(a, cloud: "demo"))
        #expect(try !store.createUploadMapping(UploadMapping(folder: "remote", template: "https://b.example/"), cloud: "demo"), "a folder is mapped once")
        #expect(try store.uploadMapping(cloud: "demo", folder: "remote") == a)
        #expect(try store.uploadMapping(cloud: "other", folder: "remote") == nil, "clouds are apart")
        #expect(try !store.updateUploadMapping(UploadMapping(folder: "nothing", template: "https://c.example/"), cloud: "demo"))
        #expect(try store.updateUploadMapping(UploadMapping(folder: "remote", template: "https://b.example/x/"), cloud: "demo"))
        #expect(try store.uploadMapping(cloud: "demo", folder: "remote")?.template == "https://b.example/x/")

        // Byte order (`B` before `a`, `a/b` after `a`), pages by the last folder.
        for folder in ["a", "a/b", "B", "z", "a_b"] {
            #expect(try store.createUploadMapping(UploadMapping(folder: folder, template: "https://\(folder.count).example/"), cloud: "demo"))
        }
        #expect(try store.uploadMappings(cloud: "demo", after: nil, limit: 10).map(\.folder) == ["B", "a", "a/b", "a_b", "remote", "z"])
        #expect(try store.uploadMappings(cloud: "demo", after: "a/b", limit: 2).map(\.folder) == ["a_b", "remote"])
        #expect(try store.uploadMappings(cloud: "other", after: nil, limit: 10).isEmpty)

        // The deepest mapped folder of a public id; the public id itself is no folder.
        #expect(try store.uploadMapping(cloud: "demo", containing: "a/b/c/photo")?.folder == "a/b")
        #expect(try store.uploadMapping(cloud: "demo", containing: "a/photo")?.folder == "a")
        #expect(try store.uploadMapping(cloud: "demo", containing: "a") == nil)
        #expect(try store.uploadMapping(cloud: "demo", containing: "ab/photo") == nil)

        #expect(try store.deleteUploadMapping(cloud: "demo", folder: "a/b"))
        #expect(try !store.deleteUploadMapping(cloud: "demo", folder: "a/b"))
        #expect(try store.uploadMapping(cloud: "demo", containing: "a/b/c/photo")?.folder == "a")
    }
}
