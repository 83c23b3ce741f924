import DeriveJobs
import DeriveLanguage
import Foundation

/// The assets' records, as rows in the database (`ServedAssets`: PostgreSQL, SQLite or the
/// memory queue), which every `derive serve` and `derive work` sharing the database sees.
///
/// Before there were rows, each record was a JSON object in the asset store
/// (`serve/<cloud>/<public_id>.json`). Such a record is migrated on first read: a public id
/// with no row but a JSON record gets a row (its version, original, tags, context), its
/// derivatives and its notifications, and is read from the rows from then on. The JSON object
/// is left in the store, unread once the row exists.
final class ServeRecords: Sendable {
    let database: any ServedAssets
    let store: any AssetStore
    let cloud: String

    init(database: any ServedAssets, store: any AssetStore, cloud: String) {
        self.database = database
        self.store = store
        self.cloud = cloud
    }

    func get(_ publicID: String) throws(DeriveError) -> ServedAsset? {
        if let asset = try database.servedAsset(cloud: cloud, publicID: publicID) { return asset }
        return try migrateLegacyRecord(publicID)
    }

    /// The key of a record in the store, as `derive serve` wrote them before the rows.
    func legacyKey(_ publicID: String) throws(DeriveError) -> StorageKey {
        try StorageKey("serve/\(cloud)/\(publicID).json")
    }

    /// Moves a JSON record from the store into rows; nil when there is none.
    func migrateLegacyRecord(_ publicID: String) throws(DeriveError) -> ServedAsset? {
        guard let bytes = try store.get(try legacyKey(publicID)) else { return nil }
        let legacy: LegacyRecord
        do {
            legacy = try LegacyRecord.decoder.decode(LegacyRecord.self, from: Data(bytes))
        } catch {
            throw DeriveError(.storageFailed, "the record of \(Quoted(publicID)) in the store cannot be read: \(error)", retryable: false)
        }
        let asset = ServedAsset(cloud: cloud, publicID: publicID, version: legacy.version, format: legacy.format, width: legacy.width,
                                height: legacy.height, bytes: legacy.bytes, sha256: legacy.sha256, originalKey: legacy.originalKey,
                                createdAt: legacy.createdAt, tags: legacy.tags, context: legacy.context)
        let recorded = try database.recordUpload(asset, overwrite: false, eager: nil)
        // Another process migrated it (or an upload took the id) first: theirs stands.
        guard !recorded.existing else { return recorded.asset }
        try database.recordDerivatives(legacy.derivatives.map { identity, old in
            ServedDerivative(identity: identity, transformation: old.transformation, format: old.format, key: old.key, width: old.width,
                             height: old.height, bytes: old.bytes, sha256: old.sha256, jobID: old.jobID)
        }, cloud: cloud, publicID: publicID, version: recorded.asset.version)
        for old in legacy.notifications ?? [] {
            try database.recordNotification(NotificationRecord(cloud: cloud, publicID: publicID, url: old.url, type: old.type, status: old.status,
                                                               attempts: old.attempts, error: old.error, sentAt: old.sentAt),
                                            cloud: cloud, publicID: publicID)
        }
        return try database.servedAsset(cloud: cloud, publicID: publicID)
    }
}

/// A record as `derive serve` wrote it to the store before the rows (the fields it read back).
struct LegacyRecord: Codable {
    struct Derivative: Codable {
        var transformation: String
        var format: String
        var key: String
        var width: Int
        var height: Int
        var bytes: Int
        var sha256: String
        var jobID: Int64
    }

    struct Notification: Codable {
        var url: String
        var type: String
        var status: Int?
        var attempts: Int
        var error: String?
        var sentAt: Date
    }

    var publicID: String
    var version: Int
    var format: String
    var width: Int
    var height: Int
    var bytes: Int
    var sha256: String
    var originalKey: String
    var createdAt: Date
    var tags: [String]
    var context: [String: String]
    var derivatives: [String: Derivative]
    var notifications: [Notification]?

    static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}
