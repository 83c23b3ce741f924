import DeriveLanguage
import Foundation

/// A source to derive again or to check: the asset it last held, if any.
public struct SourceCandidate: Sendable, Equatable {
    /// Keyset position: the asset's (or source's) row id.
    public var position: Int64
    public var source: String
    public var assetSHA256: String?
    /// The tags and context jobs gave the asset, which the jobs made for it carry again.
    public var asset: AssetFacts

    public init(position: Int64, source: String, assetSHA256: String?, asset: AssetFacts = .none) {
        self.position = position
        self.source = source
        self.assetSHA256 = assetSHA256
        self.asset = asset
    }
}

/// What the database knows about a source URL.
public struct SourceState: Sendable, Equatable {
    public var url: String
    public var assetSHA256: String
    public var version: Int
    public var etag: String?
    public var lastModified: String?
    public var checkedAt: Date
    /// The tags and context of the asset the source last held.
    public var asset: AssetFacts = .none

    public init(url: String, assetSHA256: String, version: Int, etag: String?, lastModified: String?, checkedAt: Date) {
        self.url = url
        self.assetSHA256 = assetSHA256
        self.version = version
        self.etag = etag
        self.lastModified = lastModified
        self.checkedAt = checkedAt
    }
}

/// How current a preset's outputs are.
public struct PresetStaleness: Sendable, Equatable {
    public var preset: String
    public var currentVersion: Int
    /// Assets with outputs of the preset, and those whose newest outputs are older than
    /// its current version.
    public var assets: Int
    public var stale: Int

    public init(preset: String, currentVersion: Int, assets: Int, stale: Int) {
        self.preset = preset
        self.currentVersion = currentVersion
        self.assets = assets
        self.stale = stale
    }
}

/// An output replaced by a newer one, for the superseded-outputs policy.
public struct SupersededOutput: Sendable, Equatable {
    public var id: Int64
    public var storageKey: String

    public init(id: Int64, storageKey: String) {
        self.id = id
        self.storageKey = storageKey
    }
}

/// Finding what to derive again, and keeping sources and outputs current.
public protocol ReprocessStore: Sendable {
    /// Assets matching the filter (with `preset` for `stale` and `missing`), by id after
    /// `cursor`: their source URL and content hash. Host filtering is the caller's.
    func reprocessCandidates(preset: String?, filter: AssetFilter, after cursor: Int64, limit: Int) throws(DeriveError) -> [SourceCandidate]
    /// Sources (by row) matching the filter, for revalidation.
    func revalidationCandidates(filter: AssetFilter, after cursor: Int64, limit: Int) throws(DeriveError) -> [SourceCandidate]
    func source(_ url: String) throws(DeriveError) -> SourceState?
    /// The origin confirmed the source unchanged: new validators, checked now.
    func sourceUnchanged(_ url: String, etag: String?, lastModified: String?) throws(DeriveError)
    /// The presets (and preset-less chains) the asset's current outputs were made with.
    func derivationsOf(assetSHA256: String) throws(DeriveError) -> (presets: [String], outputs: [JSONValue])
    func staleness() throws(DeriveError) -> [PresetStaleness]
    /// Superseded outputs whose objects no other current output uses, oldest first.
    func supersededOutputs(limit: Int) throws(DeriveError) -> [SupersededOutput]
    func deleteDerivatives(_ ids: [Int64]) throws(DeriveError)
}
