import DeriveJobs
import DeriveLanguage
import Foundation
import Synchronization

/// An uploaded asset as the Cloudinary API knows it: its public id, version and original, and
/// the derivatives made of it so far, each under the canonical identity of its transformation
/// (so `w_100,c_fill` and `c_fill,w_100` are one derivative).
public struct ServedAsset: Codable, Sendable, Equatable {
    public var publicID: String
    public var version: Int
    public var format: String
    public var width: Int
    public var height: Int
    public var bytes: Int
    public var sha256: String
    public var originalKey: String
    public var createdAt: Date
    public var tags: [String]
    public var context: [String: String]
    public var derivatives: [String: ServedDerivative]
    /// Jobs of this version's eager outputs, with the transformation each output is.
    public var eagerJobs: [EagerJob]
    /// Notifications sent about it (nil in records written before there were any).
    public var notifications: [NotificationRecord]? = nil
}

public struct ServedDerivative: Codable, Sendable, Equatable {
    /// The transformation as the client wrote it (the URL's path segment or the eager string).
    public var transformation: String
    public var format: String
    public var key: String
    public var width: Int
    public var height: Int
    public var bytes: Int
    public var sha256: String
    public var jobID: Int64
}

public struct EagerJob: Codable, Sendable, Equatable {
    public var jobID: Int64
    /// Each output's transformation and extension, in the job's output order.
    public var outputs: [EagerOutput]
}

public struct EagerOutput: Codable, Sendable, Equatable {
    public var transformation: String
    public var format: String
    public var identity: String
}

/// The assets' records, as JSON objects in the asset store (`serve/<cloud>/<public_id>.json`):
/// every `derive serve` and `derive work` sharing the store sees them, on either queue. One
/// process changes one record at a time (a lock around each read-modify-write); two processes
/// changing one record at the same instant may lose one's derivative entry, which the next
/// request for it derives again (the derivative itself is content-addressed and not lost).
public final class ServeRecords: Sendable {
    let store: any AssetStore
    let cloud: String
    private let lock = Mutex(())

    public init(store: any AssetStore, cloud: String) {
        self.store = store
        self.cloud = cloud
    }

    func key(_ publicID: String) throws(DeriveError) -> StorageKey {
        try StorageKey("serve/\(cloud)/\(publicID).json")
    }

    public func get(_ publicID: String) throws(DeriveError) -> ServedAsset? {
        guard let bytes = try store.get(try key(publicID)) else { return nil }
        do {
            return try Self.decoder.decode(ServedAsset.self, from: Data(bytes))
        } catch {
            throw DeriveError(.storageFailed, "the record of \(Quoted(publicID)) in the store cannot be read: \(error)", retryable: false)
        }
    }

    public func put(_ asset: ServedAsset) throws(DeriveError) {
        let data: Data
        do { data = try Self.encoder.encode(asset) } catch { throw DeriveError(.internalError, "cannot encode a record: \(error)") }
        _ = try store.put([UInt8](data), key: try key(asset.publicID), contentType: "application/json")
    }

    /// Reads, changes and writes one record under the lock (`change` returns nil: no record).
    public func update(_ publicID: String, _ change: (inout ServedAsset) -> Void) throws(DeriveError) -> ServedAsset? {
        try lock.withLock { _ throws(DeriveError) -> ServedAsset? in
            guard var asset = try get(publicID) else { return nil }
            change(&asset)
            try put(asset)
            return asset
        }
    }

    /// Writes a record unless one exists and `overwrite` is false (then the existing one is
    /// returned, with `existing` set); an overwrite gets a version above the replaced one's.
    public func create(_ asset: ServedAsset, overwrite: Bool) throws(DeriveError) -> (asset: ServedAsset, existing: Bool) {
        try lock.withLock { _ throws(DeriveError) -> (asset: ServedAsset, existing: Bool) in
            var stored = asset
            if let existing = try get(asset.publicID) {
                if !overwrite { return (existing, true) }
                stored.version = max(asset.version, existing.version + 1)
            }
            try put(stored)
            return (stored, false)
        }
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
