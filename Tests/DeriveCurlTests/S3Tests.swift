import DeriveLanguage
import DeriveJobs
@testable import DeriveCurl
import DeriveDigest
import DeriveTestSupport
import Foundation
import Testing

/// The S3 store and s3:// sources against a real S3-compatible server (moto, checking SigV4),
/// started by Scripts/test.sh.
@Suite(.enabled(if: TestServers.available, "needs the S3 server Scripts/test.sh starts"))
struct S3Tests {
    static func settings(secret: String? = nil, threshold: Int = 16 << 20) throws -> S3Settings {
        let s3 = try TestServers.s3()
        return S3Settings(endpoint: s3.endpoint, region: "us-east-1", accessKey: s3.accessKey, secretKey: secret ?? s3.secretKey,
                          pathStyle: true, bucket: s3.bucket, multipartThreshold: threshold, partSize: 5 << 20)
    }

    static func store(secret: String? = nil, threshold: Int = 16 << 20) throws -> S3AssetStore {
        let settings = try settings(secret: secret, threshold: threshold)
        return S3AssetStore(settings: settings, bucket: settings.bucket!, prefix: "tests/\(UUID().uuidString)",
                            cacheControl: "public, max-age=31536000, immutable")
    }

    @Test func putsGetsAndDeletesWithTypeAndCacheControl() throws {
        let store = try Self.store()
        let key = try StorageKey("ab/thumb-1_x.webp")
        let data = [UInt8](try Data(contentsOf: Paths.fixture("formats/webp-lossless-alpha.webp")))
        let stored = try store.put(data, key: key, contentType: "image/webp")
        #expect(stored.bytes == data.count && stored.url.contains("/tests/") && stored.url.hasSuffix("ab/thumb-1_x.webp"))
        #expect(try store.get(key) == data)
        let head = try store.client.request("HEAD", bucket: store.bucket, key: store.objectKey(key))
        #expect(head.status == 200 && head.header("content-type") == "image/webp")
        #expect(head.header("cache-control") == "public, max-age=31536000, immutable")
        try store.delete(key)
        #expect(try store.get(key) == nil)
    }

    /// Large objects go up in parts of the configured size and come back whole.
    @Test func largeObjectsUseMultipartUpload() throws {
        let store = try Self.store(threshold: 6 << 20)
        var random = SeededRandom(seed: 5)
        let data = (0..<(12 << 20)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let key = try StorageKey("big/original.bin")
        #expect(try store.put(data, key: key, contentType: "application/octet-stream").bytes == data.count)
        let head = try store.client.request("HEAD", bucket: store.bucket, key: store.objectKey(key))
        #expect(head.header("etag")?.hasSuffix("-3\"") == true, "three parts: 5, 5 and 2 MiB")
        let back = try #require(try store.get(key))
        #expect(ContentHash.sha256(back) == ContentHash.sha256(data))
        // From a file, read part by part.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("derive-s3-\(UUID().uuidString).bin")
        try Data(data).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try StorageKey("big/from-file.bin")
        #expect(try store.put(file: file, key: fromFile, contentType: "application/octet-stream").bytes == data.count)
        #expect(ContentHash.sha256(try #require(try store.get(fromFile))) == ContentHash.sha256(data))
    }

    @Test func aWrongSecretIsRefusedByTheSignatureCheck() throws {
        let store = try Self.store(secret: "not-the-secret")
        #expect {
            try store.put([1, 2, 3], key: try StorageKey("x.bin"), contentType: "application/octet-stream")
        } throws: { error in
            guard let error = error as? DeriveError else { return false }
            return error.code == .storageFailed && !error.isRetryable && error.detail.contains("SignatureDoesNotMatch")
                && !error.detail.contains("not-the-secret")
        }
    }

    /// A plain GET, as a browser sends one: no credentials, no signing.
    static func unsignedGET(_ url: String) throws -> HTTPResponse {
        try HTTPClient().perform(HTTPRequest(url: url, maxResponseBytes: 16 << 20, connectTimeout: 10, totalTimeout: 30, stallTimeout: 10))
    }

    /// A presigned URL serves the object to a plain GET (which the object, private, refuses
    /// without one) until it has expired; it points at the origin the store names for a
    /// Content-Security-Policy, and carries no secret.
    @Test func presignedURLsServeThePrivateObjectUntilTheyExpire() throws {
        let s3 = try TestServers.s3()
        let store = try Self.store()
        let key = try StorageKey("ab/thumb-1_x.webp")
        let data = [UInt8](try Data(contentsOf: Paths.fixture("formats/webp-lossless-alpha.webp")))
        _ = try store.put(data, key: key, contentType: "image/webp")
        let url = try #require(store.temporaryURL(for: key, expiresIn: 300))
        #expect(url.hasPrefix("\(s3.endpoint)/\(store.bucket)/\(store.prefix)ab/thumb-1_x.webp?X-Amz-Algorithm=AWS4-HMAC-SHA256&"))
        #expect(!url.contains(s3.secretKey))
        #expect(store.temporaryURLOrigin == s3.endpoint)
        let fetched = try Self.unsignedGET(url)
        #expect(fetched.status == 200 && fetched.body == data, "status \(fetched.status)")
        #expect(fetched.header("content-type") == "image/webp")

        let unsigned = try Self.unsignedGET(String(url.prefix { $0 != "?" }))
        #expect(unsigned.status == 403, "the object is not public: the signature is what lets the GET in")

        // Signed an hour ago for a minute: expired, though the signature itself is right.
        let expired = try #require(store.temporaryURL(for: key, expiresIn: 60, now: Date().addingTimeInterval(-3600)))
        let refused = try Self.unsignedGET(expired)
        #expect(refused.status == 403, "status \(refused.status)")
        #expect(String(decoding: refused.body, as: UTF8.self).contains("Request has expired"))
    }

    /// A presigned URL changed in any signed part, or signed with the wrong secret, is refused.
    @Test func tamperedPresignedURLsAreRefused() throws {
        let store = try Self.store()
        let key = try StorageKey("ab/thumb-1_x.webp"), other = try StorageKey("ab/other-1_x.webp")
        _ = try store.put([1, 2, 3], key: key, contentType: "image/webp")
        _ = try store.put([4, 5, 6], key: other, contentType: "image/webp")
        let url = try #require(store.temporaryURL(for: key, expiresIn: 300))
        #expect(try Self.unsignedGET(url).body == [1, 2, 3])
        let last = try #require(url.last)
        let tampered = [
            "signature": String(url.dropLast()) + (last == "0" ? "1" : "0"),
            "key": url.replacingOccurrences(of: "ab/thumb-1_x.webp?", with: "ab/other-1_x.webp?"),
            "expiry": url.replacingOccurrences(of: "&X-Amz-Expires=300&", with: "&X-Amz-Expires=600&"),
            "secret": try #require(S3AssetStore(settings: try Self.settings(secret: "not-the-secret"), bucket: store.bucket,
                                                prefix: store.prefix).temporaryURL(for: key, expiresIn: 300)),
        ]
        for (what, changed) in tampered.sorted(by: { $0.key < $1.key }) {
            #expect(changed != url, "\(what)")
            let response = try Self.unsignedGET(changed)
            #expect(response.status == 403, "\(what): status \(response.status)")
            #expect(String(decoding: response.body, as: UTF8.self).contains("SignatureDoesNotMatch"), "\(what)")
        }
    }

    /// Server errors are retried: the origin's /s3-flaky answers 503 twice, then 200.
    @Test func serverErrorsAreRetried() throws {
        let origin = try TestServers.origin()
        let settings = S3Settings(endpoint: origin, region: "us-east-1", accessKey: "a", secretKey: "b", bucket: "s3-flaky")
        let store = S3AssetStore(settings: settings, bucket: "s3-flaky", prefix: UUID().uuidString)
        let key = try StorageKey("retried.bin")
        _ = try store.put([1, 2, 3], key: key, contentType: "application/octet-stream")
        #expect(try TestServers.requests("/s3-flaky/\(store.prefix)").requests.count == 3)
    }

    @Test func s3SourcesComeOnlyFromAllowedBuckets() throws {
        let store = try Self.store()
        let data = [UInt8](try Data(contentsOf: Paths.fixture("photos/grace_hopper_noexif.jpg")))
        let key = try StorageKey("originals/photo.jpg")
        _ = try store.put(data, key: key, contentType: "image/jpeg")
        let settings = try Self.settings()
        let fetcher = try CurlFetcher(settings: FetchSettings(s3: settings))
        let source = "s3://\(store.bucket)/\(store.objectKey(key))"
        let fetched = try fetcher.fetch(source)
        #expect(fetched.image.bytes == data && fetched.format == .jpeg)
        #expect { try fetcher.fetch("s3://someone-elses-bucket/secret.jpg") } throws: {
            ($0 as? DeriveError)?.detail.contains("DERIVE_S3_SOURCE_BUCKETS") == true
        }
        #expect { try fetcher.fetch("s3://\(store.bucket)/no/such/key.jpg") } throws: { ($0 as? DeriveError)?.code == .sourceRefused }
    }

    /// A bucket becomes part of the host name of a virtual-hosted request: with any bucket
    /// allowed, a "bucket" that is really a host (or carries URL syntax) is refused before any
    /// request, so the signed request cannot go elsewhere.
    @Test func bucketNamesThatAreNotBucketsAreRefused() throws {
        var settings = FetchSettings(s3: S3Settings(endpoint: "https://s3.eu-west-1.amazonaws.com", region: "eu-west-1", accessKey: "AK",
                                                    secretKey: "SK", pathStyle: false))
        settings.s3SourceBuckets = ["*"]
        let fetcher = try CurlFetcher(settings: settings)
        for source in ["s3://attacker.example?/k.jpg", "s3://169.254.169.254#/k.jpg", "s3://user@evil/k.jpg", "s3://UPPER/k.jpg", "s3://ab/k.jpg"] {
            #expect(throws: DeriveError.self, "\(source)") { try fetcher.fetch(source) }
            do { _ = try fetcher.fetch(source) } catch {
                #expect(error.code == .sourceRefused && error.detail.contains("is not an S3 bucket name"), "\(source): \(error)")
            }
        }
    }
}
