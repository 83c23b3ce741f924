import DeriveLanguage
import Foundation

/// What the dashboard's asset pages read: the newest assets with their current outputs, and
/// everything recorded about one asset. Read-only; keyset-paged; every query by an index.
public protocol AssetCatalog: Sendable {
    /// Assets newest first (by row id), those with ids below `cursor` when given, each with up
    /// to `outputsPerAsset` of its current (not superseded) derivatives, narrowest first.
    func recentAssets(before cursor: Int64?, limit: Int, outputsPerAsset: Int) throws(DeriveError) -> AssetPage
    /// One asset: its row (with the faces found, when a job looked), every derivative ever
    /// recorded for it (superseded ones too), and the source URLs that last held it; nil for an
    /// id no asset has.
    func asset(id: Int64) throws(DeriveError) -> AssetDetail?
    /// One derivative row, to serve its object from the store; nil for an id no row has.
    func derivative(id: Int64) throws(DeriveError) -> CatalogDerivative?
    /// The id of the asset with this content (a job's report names its source's SHA-256), or
    /// nil when none is recorded.
    func assetID(sha256: String) throws(DeriveError) -> Int64?
}

public struct AssetPage: Sendable, Equatable {
    public var assets: [AssetSummary]
    /// The cursor for the next (older) page: the last asset's id when the page is full, nil when
    /// it is not (so a full page that ends at the oldest asset is followed by an empty one).
    public var next: Int64?

    public init(assets: [AssetSummary], next: Int64?) {
        self.assets = assets
        self.next = next
    }
}

public struct AssetSummary: Sendable, Equatable {
    public var id: Int64
    public var sha256: String
    public var sourceURL: String
    public var format: String
    public var width: Int
    public var height: Int
    public var createdAt: Date
    /// Current derivatives in all (the page shows only `outputs`).
    public var outputCount: Int
    public var outputs: [CatalogDerivative]

    public init(id: Int64, sha256: String, sourceURL: String, format: String, width: Int, height: Int, createdAt: Date, outputCount: Int,
                outputs: [CatalogDerivative]) {
        self.id = id
        self.sha256 = sha256
        self.sourceURL = sourceURL
        self.format = format
        self.width = width
        self.height = height
        self.createdAt = createdAt
        self.outputCount = outputCount
        self.outputs = outputs
    }
}

/// A derivative row as the operator sees it: what it is, when it was made, and whether it is
/// still what its preset would make today.
public struct CatalogDerivative: Sendable, Equatable {
    public var id: Int64
    public var assetID: Int64
    public var jobID: Int64
    public var record: DerivativeRecord
    public var createdAt: Date
    /// Set when a newer output replaced this one.
    public var supersededAt: Date?
    /// The preset's newest version (retired or not); nil for outputs made without a preset
    /// or from a preset that no longer exists.
    public var currentPresetVersion: Int?

    public init(id: Int64, assetID: Int64, jobID: Int64, record: DerivativeRecord, createdAt: Date, supersededAt: Date?,
                currentPresetVersion: Int?) {
        self.id = id
        self.assetID = assetID
        self.jobID = jobID
        self.record = record
        self.createdAt = createdAt
        self.supersededAt = supersededAt
        self.currentPresetVersion = currentPresetVersion
    }

    /// Replaced already, or made by an older version of its preset than the newest.
    public var isStale: Bool {
        if supersededAt != nil { return true }
        guard let made = record.presetVersion, let current = currentPresetVersion else { return false }
        return made < current
    }
}

public struct AssetDetail: Sendable, Equatable {
    public var id: Int64
    public var record: AssetRecord
    public var createdAt: Date
    public var updatedAt: Date
    /// Every derivative, newest first.
    public var derivatives: [CatalogDerivative]
    /// The source URLs whose last content this is, with what revalidation knows of each.
    public var sources: [SourceRevalidation]

    public init(id: Int64, record: AssetRecord, createdAt: Date, updatedAt: Date, derivatives: [CatalogDerivative], sources: [SourceRevalidation]) {
        self.id = id
        self.record = record
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.derivatives = derivatives
        self.sources = sources
    }
}

/// A source URL's state for revalidation (`derive.sources`).
public struct SourceRevalidation: Sendable, Equatable {
    public var url: String
    /// 1 for the first content seen at the URL, +1 each time it changed.
    public var version: Int
    public var etag: String?
    public var lastModified: String?
    /// When the origin was last asked (or the source last fetched).
    public var checkedAt: Date
    /// When the content last changed.
    public var changedAt: Date

    public init(url: String, version: Int, etag: String?, lastModified: String?, checkedAt: Date, changedAt: Date) {
        self.url = url
        self.version = version
        self.etag = etag
        self.lastModified = lastModified
        self.checkedAt = checkedAt
        self.changedAt = changedAt
    }
}
