import DeriveLanguage
import DeriveJobs
@testable import DeriveCurl
import DeriveTestSupport
import Foundation
import Testing

/// Multipart uploads that writers killed mid-upload left in an S3 store are aborted once older
/// than the threshold: against moto (which checks signatures and really aborts), and against
/// the test origin's listing, which gives uploads real start times where moto reports one fixed
/// time for all of them.
@Suite(.enabled(if: TestServers.available, "needs the S3 server and origin Scripts/test.sh starts"))
struct S3AbandonedUploadTests {
    /// Begins a multipart upload of `key` and sends one part, as a writer killed before
    /// completing it would have; returns its upload ID.
    static func begin(_ store: S3AssetStore, _ key: String) throws -> String {
        let object = store.objectKey(try StorageKey(key))
        let created = try store.client.request("POST", bucket: store.bucket, key: object, query: [("uploads", "")])
        let id = try #require(XMLText.first("UploadId", in: String(decoding: created.body, as: UTF8.self)), "status \(created.status)")
        let part = try store.client.request("PUT", bucket: store.bucket, key: object, query: [("partNumber", "1"), ("uploadId", id)],
                                            body: [UInt8](repeating: 7, count: 1 << 16))
        #expect(part.status == 200, "the part was stored")
        return id
    }

    /// The status of ListParts for an upload: 200 while it exists, 404 once aborted.
    static func parts(_ store: S3AssetStore, _ key: String, _ id: String) throws -> Int {
        try store.client.request("GET", bucket: store.bucket, key: key, query: [("uploadId", id)]).status
    }

    static func uploads(_ store: S3AssetStore) throws -> [String] {
        try store.client.multipartUploads(bucket: store.bucket, prefix: store.prefix).map(\.id)
    }

    @Test func anUploadOlderThanTheCutoffIsAbortedAndNothingElse() throws {
        let store = try S3Tests.store()
        let neighbour = try S3Tests.store()   // another store (prefix) in the same bucket
        let abandoned = try Self.begin(store, "ab/thumb.webp")
        let elsewhere = try Self.begin(neighbour, "ab/thumb.webp")
        let output = try StorageKey("ab/card.avif")
        _ = try store.put([1, 2, 3], key: output, contentType: "image/avif")

        let listed = try store.client.multipartUploads(bucket: store.bucket, prefix: store.prefix)
        let abandonedKey = store.objectKey(try StorageKey("ab/thumb.webp"))
        #expect(listed.map(\.id) == [abandoned] && listed.first?.key == abandonedKey)
        // moto says when every upload began (one fixed time); cutoffs either side of it.
        let initiated = try #require(listed.first?.initiated, "the server's start time is read")
        let recent = try store.removeAbandonedWrites(olderThan: initiated.addingTimeInterval(-1))
        #expect(recent == AbandonedWriteSweep(), "begun after the cutoff: not abandoned yet")
        #expect(try Self.uploads(store) == [abandoned])
        #expect(try Self.parts(store, abandonedKey, abandoned) == 200, "its parts are still there")

        let old = try store.removeAbandonedWrites(olderThan: initiated.addingTimeInterval(1))
        #expect(old == AbandonedWriteSweep(removed: ["\(store.prefix)ab/thumb.webp (upload \(abandoned))"]), "\(old)")
        #expect(try Self.uploads(store).isEmpty)
        // Aborted on the server: the upload and its parts are gone (NoSuchUpload).
        #expect(try Self.parts(store, abandonedKey, abandoned) == 404)
        // The other store's upload and this store's objects are untouched.
        #expect(try Self.uploads(neighbour) == [elsewhere])
        #expect(try store.get(output) == [1, 2, 3])
        _ = try neighbour.removeAbandonedWrites(olderThan: initiated.addingTimeInterval(1))
        #expect(try Self.uploads(neighbour).isEmpty)
    }

    /// `derive prune` is the operator's entry point: with the default threshold (an hour)
    /// moto's uploads, begun "in 2010", are abandoned; with a threshold reaching back before
    /// then they are not.
    @Test func derivePruneAbortsAbandonedUploads() throws {
        let store = try S3Tests.store()
        let abandoned = try Self.begin(store, "originals/big.jpg")
        let s3 = try TestServers.s3()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-prune-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let environment = ["AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey, "DERIVE_S3_ENDPOINT": s3.endpoint,
                           "DERIVE_STORE": "s3://\(store.bucket)/\(store.prefix)",
                           "DERIVE_DATABASE_URL": "sqlite:" + folder.appendingPathComponent("derive.sqlite").path]
        let kept = try DeriveBinary.run(["prune", "--abandoned-after", "36500d", "--json"], environment: environment)
        #expect(kept.status == 0, "\(kept.stderr)")
        #expect(kept.stdout.contains(#""abandonedWritesRemoved":0"#), "\(kept.stdout)")
        #expect(try Self.uploads(store) == [abandoned])
        let pruned = try DeriveBinary.run(["prune", "--json"], environment: environment)
        #expect(pruned.status == 0, "\(pruned.stderr)")
        #expect(pruned.stdout.contains(#""abandonedWritesRemoved":1"#), "\(pruned.stdout)")
        #expect(try Self.uploads(store).isEmpty)
    }

    /// With real start times, in one sweep: the upload begun two hours ago is aborted, the one
    /// begun a minute ago stays, the listing is followed to its second page, and uploads
    /// outside the store's prefix (in a folder that merely starts like it, or anywhere a server
    /// ignoring the prefix sends) are never touched.
    @Test func oneSweepAbortsTheOldUploadAndKeepsTheRecentOne() throws {
        let origin = try TestServers.origin()
        let settings = S3Settings(endpoint: origin, region: "us-east-1", accessKey: "a", secretKey: "b", bucket: "s3-uploads")
        let prefix = "p-\(UUID().uuidString)/"
        let store = S3AssetStore(settings: settings, bucket: "s3-uploads", prefix: prefix)
        let sweep = try store.removeAbandonedWrites(olderThan: Date().addingTimeInterval(-3600))
        #expect(sweep == AbandonedWriteSweep(removed: ["\(prefix)a-old.webp (upload upload-old)"]), "\(sweep)")
        let folder = String(prefix.dropLast())
        let requests = try TestServers.requests("/s3-uploads/").requests
        let listings = requests.filter { $0[":method"] == "GET" && $0[":path"]?.contains("prefix=\(folder)&") == true }
        #expect(listings.count == 2 && listings.last?[":path"]?.contains("key-marker=") == true, "\(listings)")
        let aborts = requests.filter { $0[":method"] == "DELETE" && $0[":path"]?.contains(folder) == true }
        #expect(aborts.map { $0[":path"] } == ["/s3-uploads/\(prefix)a-old.webp?uploadId=upload-old"], "\(aborts)")
        #expect(!requests.contains { $0[":method"] == "DELETE" && $0[":path"]?.contains("upload-elsewhere") == true })
    }

    @Test func listingsAreReadWithTheirTimesAndNextPage() throws {
        let page = """
            <?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult><Bucket>b</Bucket><IsTruncated>true</IsTruncated>\
            <NextKeyMarker>d/b&amp;c.jpg</NextKeyMarker><NextUploadIdMarker>u2</NextUploadIdMarker>\
            <Upload><Key>d/a.webp</Key><UploadId>u1</UploadId><Initiator><ID>x</ID></Initiator><Initiated>2026-11-23T06:00:00.250Z</Initiated></Upload>\
            <Upload><Key>d/b&amp;c.jpg</Key><UploadId>u2</UploadId><Initiated>2026-11-23T08:00:00Z</Initiated></Upload>\
            <Upload><Key>d/c.jpg</Key><UploadId>u3</UploadId><Initiated>yesterday</Initiated></Upload>\
            </ListMultipartUploadsResult>
            """
        let read = S3Client.uploads(in: page)
        #expect(read.uploads.map(\.key) == ["d/a.webp", "d/b&c.jpg", "d/c.jpg"] && read.uploads.map(\.id) == ["u1", "u2", "u3"])
        #expect(read.uploads[0].initiated == Date(timeIntervalSince1970: 1_795_413_600.25))
        #expect(read.uploads[1].initiated == Date(timeIntervalSince1970: 1_795_420_800))
        #expect(read.uploads[2].initiated == nil, "an unreadable time is not taken for an old one")
        #expect(read.next?.key == "d/b&c.jpg" && read.next?.id == "u2")
        #expect(S3Client.uploads(in: "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>").next == nil)
    }
}
