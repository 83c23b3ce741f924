import DeriveLanguage
import DeriveJobs
@testable import DeriveCurl
import DeriveDigest
import Foundation
import Testing

/// SigV4 presigned URLs, without any server: AWS's documented presigned-URL example, and URLs
/// botocore (an independent SigV4 implementation) signed from the same inputs.
struct PresignTests {
    static let example = S3Settings(endpoint: "https://s3.amazonaws.com", region: "us-east-1", accessKey: "AKIAIOSFODNN7EXAMPLE",
                                    secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", pathStyle: false)

    /// AWS's example ("Authenticating Requests: Using Query Parameters"): GET test.txt in
    /// examplebucket, virtual-host style, 2013-05-24T00:00:00Z, 86400 s.
    @Test func awsDocumentedExample() {
        let url = S3Presigner.presignedGET(settings: Self.example, bucket: "examplebucket", key: "test.txt",
                                           now: Date(timeIntervalSince1970: 1_369_353_600), expires: 86400)
        #expect(url == "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z"
            + "&X-Amz-Expires=86400&X-Amz-SignedHeaders=host"
            + "&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
        // Fractions of a second are dropped, as X-Amz-Date has none.
        #expect(S3Presigner.presignedGET(settings: Self.example, bucket: "examplebucket", key: "test.txt",
                                         now: Date(timeIntervalSince1970: 1_369_353_600.75), expires: 86400) == url)
    }

    static func parameters(_ url: String) -> [String: String] {
        let query = url.split(separator: "?", maxSplits: 1).last.map(String.init) ?? ""
        return Dictionary(uniqueKeysWithValues: query.split(separator: "&").map {
            let pair = $0.split(separator: "=", maxSplits: 1)
            return (String(pair[0]), String(pair.count > 1 ? pair[1] : ""))
        })
    }

    /// Path style with a session token, and a store's prefix: the signature botocore computes
    /// for the same request (botocore orders the token after SignedHeaders in its URL; the
    /// canonical query is sorted either way).
    @Test func pathStyleWithSessionTokenMatchesBotocore() throws {
        let settings = S3Settings(endpoint: "http://127.0.0.1:9000/", region: "eu-west-1", accessKey: "AKIDEXAMPLE",
                                  secretKey: "secret/with+signs", sessionToken: "FQoG/token+with=signs", pathStyle: true)
        let store = S3AssetStore(settings: settings, bucket: "derive-test", prefix: "tests/run-1")
        let url = try #require(store.temporaryURL(for: try StorageKey("ab/thumb-1_x.webp"), expiresIn: 900,
                                                  now: Date(timeIntervalSince1970: 1_795_473_005)))
        #expect(url.hasPrefix("http://127.0.0.1:9000/derive-test/tests/run-1/ab/thumb-1_x.webp?X-Amz-Algorithm=AWS4-HMAC-SHA256&"))
        let query = Self.parameters(url)
        #expect(query == [
            "X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": "AKIDEXAMPLE%2F20261123%2Feu-west-1%2Fs3%2Faws4_request",
            "X-Amz-Date": "20261123T223005Z", "X-Amz-Expires": "900", "X-Amz-SignedHeaders": "host",
            "X-Amz-Security-Token": "FQoG%2Ftoken%2Bwith%3Dsigns",
            "X-Amz-Signature": "39c1e24116c892a15b7a7280eb68ec570a378f77736934501d46bc1adc164c4a",
        ])
        #expect(!url.contains("secret"), "the secret key is never in the URL")
        #expect(store.temporaryURLOrigin == "http://127.0.0.1:9000")
    }

    /// Virtual-host style under a prefix, at the 7-day limit: botocore's URL byte for byte.
    /// Longer is capped to it, shorter than a second refused.
    @Test func virtualHostStyleAndTheExpiryLimits() throws {
        let settings = S3Settings(endpoint: "https://s3.example.com", region: "eu-west-1", accessKey: "AKIDEXAMPLE",
                                  secretKey: "secret/with+signs", pathStyle: false)
        let store = S3AssetStore(settings: settings, bucket: "derive-test", prefix: "tests/run-1/")
        let key = try StorageKey("ab/thumb-1_x.webp")
        let now = Date(timeIntervalSince1970: 1_795_473_005)
        let week = "https://derive-test.s3.example.com/tests/run-1/ab/thumb-1_x.webp?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            + "&X-Amz-Credential=AKIDEXAMPLE%2F20261123%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20261123T223005Z"
            + "&X-Amz-Expires=604800&X-Amz-SignedHeaders=host"
            + "&X-Amz-Signature=0b2f35715eed51f7423d8ee3d82fcd530a73dbdd1f035181f4d57782122167e0"
        #expect(store.temporaryURL(for: key, expiresIn: 604_800, now: now) == week)
        #expect(store.temporaryURL(for: key, expiresIn: 30 * 86400, now: now) == week)
        #expect(store.temporaryURL(for: key, expiresIn: 0, now: now) == nil)
        #expect(store.temporaryURL(for: key, expiresIn: -5) == nil)
        #expect(S3Presigner.presignedGET(settings: settings, bucket: "derive-test", key: "k", now: now, expires: 604_801) == nil)
        #expect(store.temporaryURL(for: key, expiresIn: 1, now: now)?.contains("&X-Amz-Expires=1&") == true)
        #expect(store.temporaryURLOrigin == "https://derive-test.s3.example.com")
    }

    /// A URL with the scheme's default port keeps it, but is signed for the Host header clients
    /// send for it (without the port); the origin is written without it, as browsers do.
    @Test func aDefaultPortIsNotSigned() throws {
        let explicit = S3Settings(endpoint: "https://s3.amazonaws.com:443", region: "us-east-1", accessKey: "AKIAIOSFODNN7EXAMPLE",
                                  secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", pathStyle: false)
        let now = Date(timeIntervalSince1970: 1_369_353_600)
        let url = try #require(S3Presigner.presignedGET(settings: explicit, bucket: "examplebucket", key: "test.txt", now: now, expires: 86400))
        #expect(url.hasPrefix("https://examplebucket.s3.amazonaws.com:443/test.txt?"))
        #expect(Self.parameters(url)["X-Amz-Signature"] == "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404")
        #expect(S3Presigner.origin(settings: explicit, bucket: "examplebucket") == "https://examplebucket.s3.amazonaws.com")
    }

    /// Folder stores have no presigned URLs: the dashboard serves their bytes itself.
    @Test func folderStoresHaveNone() throws {
        let store: any AssetStore = FileAssetStore(root: FileManager.default.temporaryDirectory)
        #expect(store.temporaryURL(for: try StorageKey("a/b.jpg"), expiresIn: 60) == nil)
        #expect(store.temporaryURLOrigin == nil)
        let s3: any AssetStore = S3AssetStore(settings: Self.example, bucket: "examplebucket")
        #expect(s3.temporaryURL(for: try StorageKey("a/b.jpg"), expiresIn: 60)?.hasPrefix("https://examplebucket.s3.amazonaws.com/a/b.jpg?") == true)
        #expect(s3.temporaryURLOrigin == "https://examplebucket.s3.amazonaws.com")
    }
}
