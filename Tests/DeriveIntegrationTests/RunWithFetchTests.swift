import DeriveLanguage
import DeriveJobs
@testable import DeriveCurl
import DeriveTestSupport
import Foundation
import Testing

/// `derive run` fetching URLs and writing to S3 by key template, end to end.
@Suite(.enabled(if: TestServers.available, "needs the servers Scripts/test.sh starts"))
struct RunWithFetchTests {
    @Test func fetchesAURLAndStoresByKeyTemplateInS3() throws {
        let origin = try TestServers.origin()
        let s3 = try TestServers.s3()
        let prefix = "run-\(UUID().uuidString)"
        let environment = ["AWS_ACCESS_KEY_ID": s3.accessKey, "AWS_SECRET_ACCESS_KEY": s3.secretKey, "DERIVE_S3_ENDPOINT": s3.endpoint,
                           "DERIVE_S3_REGION": "us-east-1", "DERIVE_STORE_PUBLIC_URL": "https://img.example.com"]
        let url = origin + "/fixture/photos/grace_hopper_noexif.jpg?n=\(UUID().uuidString)"
        let result = try DeriveBinary.run(["run", url, "--chain", "c_thumb,w_64,h_64/f_webp", "--fetch-allow", "127.0.0.1/32",
                                           "--store", "s3://\(s3.bucket)/\(prefix)"], environment: environment)
        #expect(result.status == 0, "\(result.stderr)")
        guard case .array(let reports) = try JSONParser().parse(result.stdout), case .array(let outputs)? = reports.first?["outputs"],
              case .string(let location)? = outputs.first?["location"], case .string(let sha)? = reports.first?["source"]?["sha256"] else {
            Issue.record("unexpected report \(result.stdout)")
            return
        }
        #expect(reports.first?["source"]?["fetch"]?["origin"] == .string("network"))
        #expect(location.hasPrefix("https://img.example.com/\(prefix)/\(sha)/default-") && location.hasSuffix(".webp"))
        let settings = S3Settings(endpoint: s3.endpoint, region: "us-east-1", accessKey: s3.accessKey, secretKey: s3.secretKey)
        let store = S3AssetStore(settings: settings, bucket: s3.bucket, prefix: prefix)
        let key = try StorageKey(String(location.dropFirst("https://img.example.com/\(prefix)/".count)))
        let object = try #require(try store.get(key))
        #expect(ImageSniffer.format(of: object) == .webp)
    }

    @Test func aLoopbackURLIsRefusedByDefault() throws {
        let origin = try TestServers.origin()
        let result = try DeriveBinary.run(["run", origin + "/fixture/photos/grace_hopper_noexif.jpg", "--chain", "w_10/f_png", "--out",
                                           FileManager.default.temporaryDirectory.appendingPathComponent("derive-\(UUID().uuidString)").path])
        #expect(result.status != 0 && result.stderr.contains("source_refused") && result.stderr.contains("loopback"))
    }
}
