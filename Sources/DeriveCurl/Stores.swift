import DeriveLanguage
import DeriveJobs
import Foundation

/// Builds the configured asset store: a folder, or an S3 bucket.
public enum Stores {
    public static func make(_ settings: StoreSettings, s3: S3Settings?) throws(DeriveError) -> any AssetStore {
        switch settings.location {
        case .folder(let url):
            return FileAssetStore(root: url, publicBaseURL: settings.publicBaseURL)
        case .s3(let bucket, let prefix):
            guard let s3 else { throw DeriveError(.storageFailed, "the s3://\(bucket) store needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") }
            return S3AssetStore(settings: s3, bucket: bucket, prefix: prefix, cacheControl: settings.cacheControl,
                                publicBaseURL: settings.publicBaseURL)
        }
    }
}
