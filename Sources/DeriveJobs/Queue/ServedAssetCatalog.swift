import DeriveLanguage
import Foundation

/// The management half of Cloudinary's API over `derive serve`'s records (issue 38): listing
/// assets page by page (by prefix, public ids, tag or context), the tags in use, and changing
/// assets' tags and context. The routes that answer Cloudinary's SDK build on this; deleting
/// (the rows, then the store's objects nothing names any more), renaming, folders and usage are here.
///
/// Pages are keyset pages: a cursor is the sort key of the last asset given, so a page costs
/// one index range however deep it is, and an asset added or removed between two pages moves
/// no other asset from one page to another.
public protocol ServedAssetCatalog: Sendable {
    /// One page of the assets `query` selects, in its order, and the cursor of the next page
    /// (nil after the last).
    func listServedAssets(_ query: ServedAssetQuery) throws(DeriveError) -> ServedAssetPage

    /// How many assets `query`'s filter selects, by format (its order, cursor and limit aside):
    /// one aggregate statement, for Search's `total_count` and `aggregate`.
    func countServedAssets(_ query: ServedAssetQuery) throws(DeriveError) -> [String: Int]

    /// Applies `change` to each asset of `publicIDs` that is recorded, in one transaction;
    /// returns the public ids it found, in the order given.
    func change(_ change: AssetChange, cloud: String, publicIDs: [String]) throws(DeriveError) -> [String]

    /// Forgets what `scope` names of the assets of `publicIDs` that are recorded, in one
    /// transaction: `.whole` each asset's row and its derivatives' rows, `.derivatives` only the
    /// derivatives' rows (all of them, or those of the identities given) and the eager outputs
    /// that would record them again. The job derivative rows those outputs were recorded from
    /// (same job and key, and the asset's eager jobs' rows) go with them. From then on what was
    /// forgotten is neither listed nor delivered, and a job still making one of its outputs
    /// records nothing as the asset's. Notification records are kept, as an overwrite keeps them.
    ///
    /// The objects the forgotten rows named are not deleted here: their keys are noted in the
    /// write ledger of `store` (as a finished job's unrecorded writes are) and returned, for
    /// `releaseServedObject` to delete each once the transaction has committed. A process
    /// killed in between leaves the notes, which `derive prune` and the workers' sweeps find.
    func deleteServedAssets(cloud: String, publicIDs: [String], scope: ServedDeletionScope, store: String) throws(DeriveError) -> ServedDeletion

    /// Gives the asset `from` the public id `to`, with its derivatives, eager jobs and
    /// notifications, in one transaction: from then on `from` is neither listed nor delivered
    /// (a job still making one of its outputs records nothing) and `to` is, at the same version
    /// with the same objects (their keys name content, not ids). An asset already under `to` is
    /// deleted first when `overwrite` is set (its objects noted for release as a deletion's),
    /// and the rename refused otherwise.
    func renameServedAsset(cloud: String, from: String, to: String, overwrite: Bool, store: String) throws(DeriveError) -> ServedRename

    /// Queues `job` (the eager outputs `outputs` of the asset's original) and adds it to the
    /// asset's eager jobs, in one transaction, so its outputs are recorded as the asset's when it
    /// ends (by the request that waits, or the next read: `explicit`). Nil, and nothing queued,
    /// when the asset is not recorded at `version` (deleted or overwritten meanwhile).
    func addEagerJob(cloud: String, publicID: String, version: Int, job: NewJob, outputs: [EagerOutput]) throws(DeriveError) -> JobID?

    /// How many assets and derivatives a cloud has, and their bytes (the Admin API's `usage`).
    func servedUsage(cloud: String) throws(DeriveError) -> ServedUsage

    /// Deletes the object under `key` through `delete` when nothing names it any more (no
    /// served asset's original, no served derivative, no job's derivative row, no unfinished
    /// job's noted write), checked and deleted while no upload or run can start to use the key
    /// (`holdingServedObject`, the ledger's lock); forgets the key's notes of finished work.
    /// Returns whether the object was deleted.
    func releaseServedObject(_ key: String, store: String, delete: (String) throws(DeriveError) -> Void) throws(DeriveError) -> Bool

    /// Runs `body` while no `releaseServedObject` of `key` can run: an upload that has just
    /// recorded a row naming an original it stored first checks here that the object is still
    /// there (a release that checked before the row committed may have deleted it) and stores
    /// it again if not.
    func holdingServedObject(_ key: String, store: String, _ body: () throws(DeriveError) -> Void) throws(DeriveError)

    /// The distinct tags of a cloud's assets in code-point order, those starting with `prefix`
    /// only when given, at most `limit` after `after`; `next` is the last one given when more follow.
    func servedTags(cloud: String, prefix: String?, limit: Int, after: String?) throws(DeriveError) -> (tags: [String], next: String?)
}

extension ServedAssetCatalog {
    public func changeTags(_ change: TagChange, cloud: String, publicIDs: [String]) throws(DeriveError) -> [String] {
        try self.change(.tags(change), cloud: cloud, publicIDs: publicIDs)
    }

    public func changeContext(_ change: ContextChange, cloud: String, publicIDs: [String]) throws(DeriveError) -> [String] {
        try self.change(.context(change), cloud: cloud, publicIDs: publicIDs)
    }

    /// The folders directly under `parent` (`""` for the root), by name in code-point order:
    /// Derive's folders are the `/`-separated prefixes of public ids, so a folder exists while
    /// an asset is under it. At most `limit` after the name `after`; `next` is the last one
    /// given when more follow. Each folder found costs one keyset page (the listing jumps past
    /// the folder's ids); ids directly at the level are read 500 to a page.
    public func servedFolders(cloud: String, under parent: String, limit: Int, after: String?) throws(DeriveError) -> (folders: [String], next: String?) {
        let prefix = parent.isEmpty ? "" : parent + "/"
        // Past every id under `prefix + name + "/"` (in UTF-8 byte order, as the stores compare).
        func past(_ name: String) -> String { prefix + name + "/\u{10FFFF}" }
        var folders: [String] = []
        var cursor = after.map(past)
        while folders.count <= limit {
            var query = ServedAssetQuery(cloud: cloud, filter: prefix.isEmpty ? .all : .prefix(prefix), order: .publicID, ascending: true, limit: 500)
            query.after = cursor.map { ServedAssetCursor(order: .publicID, createdAt: 0, publicID: $0) }
            let page = try listServedAssets(query)
            if let (id, name) = page.assets.lazy.compactMap({ asset -> (String, String)? in
                let rest = asset.publicID.dropFirst(prefix.count)
                return rest.firstIndex(of: "/").map { (asset.publicID, String(rest[..<$0])) }
            }).first {
                // An id past the jump (one that goes on with U+10FFFF) moves the listing on by itself.
                if name == folders.last {
                    cursor = id
                    continue
                }
                folders.append(name)
                cursor = past(name)
            } else if let next = page.next {
                cursor = next.publicID
            } else {
                break
            }
        }
        let page = Array(folders.prefix(max(1, limit)))
        return (page, folders.count > page.count ? page.last : nil)
    }

    /// Deletes from `store` each of `keys` nothing names any more (`releaseServedObject`). A key
    /// that cannot be deleted now is reported in `failures`; its note stays for the next sweep.
    public func releaseServedObjects(_ keys: [String], in store: any AssetStore) -> AbandonedWriteSweep {
        var sweep = AbandonedWriteSweep()
        for key in keys {
            do {
                let deleted = try releaseServedObject(key, store: store.identity) { key throws(DeriveError) in
                    try store.delete(try StorageKey(key))
                }
                if deleted { sweep.removed.append(key) }
            } catch {
                sweep.failures.append("\(key): \(error)")
            }
        }
        return sweep
    }
}

/// What a deletion forgets of each asset it names.
public enum ServedDeletionScope: Sendable, Equatable {
    /// The asset: its row, its derivatives' rows (Cloudinary's plain delete).
    case whole
    /// Its derivatives only (`keep_original`): all of them when `identities` is nil, else those
    /// whose identity is listed (`transformations`, derived resource ids).
    case derivatives(identities: Set<String>?)

    /// Whether a derivative of this identity goes.
    public func includes(_ identity: String) -> Bool {
        if case .derivatives(let identities?) = self { return identities.contains(identity) }
        return true
    }

    /// The eager jobs a derivatives-only deletion keeps: none when every derivative goes, else
    /// those with no output it deletes. So reading the asset does not record a deleted output
    /// again from its finished job (a job's outputs are matched to its results by position, so
    /// a job is kept or dropped whole).
    public func keptEagerJobs(_ jobs: [EagerJob]) -> [EagerJob] {
        guard case .derivatives(let identities?) = self else { return [] }
        return jobs.filter { job in !job.outputs.contains { identities.contains($0.identity) } }
    }
}

/// A cloud's assets and derivatives, counted, and their bytes.
public struct ServedUsage: Sendable, Equatable {
    public var assets: Int
    public var assetBytes: Int
    public var derivatives: Int
    public var derivativeBytes: Int

    public init(assets: Int, assetBytes: Int, derivatives: Int, derivativeBytes: Int) {
        self.assets = assets
        self.assetBytes = assetBytes
        self.derivatives = derivatives
        self.derivativeBytes = derivativeBytes
    }
}

/// What a rename did.
public enum ServedRename: Sendable, Equatable {
    /// Renamed; `replaced` is what deleting the asset that was under the new id forgot.
    case renamed(replaced: ServedDeletion)
    /// No asset under the old id.
    case notFound
    /// An asset under the new id, and no `overwrite`.
    case targetExists
}

/// What `deleteServedAssets` forgot.
public struct ServedDeletion: Sendable, Equatable {
    /// The public ids found, in the order given.
    public var found: [String]
    /// How many derivative rows each public id found lost.
    public var derived: [String: Int]
    /// The store keys the forgotten rows named, to release once committed.
    public var keys: [String]

    public init(found: [String] = [], derived: [String: Int] = [:], keys: [String] = []) {
        self.found = found
        self.derived = derived
        self.keys = keys
    }
}

/// A change to assets' tags or context, as the stores apply it: read, changed here, written back.
public enum AssetChange: Sendable, Equatable {
    case tags(TagChange)
    case context(ContextChange)

    public func applied(to asset: ServedAsset) -> ServedAsset {
        var changed = asset
        switch self {
        case .tags(let change): changed.tags = change.applied(to: asset.tags)
        case .context(let change): changed.context = change.applied(to: asset.context)
        }
        return changed
    }

    /// The `served_assets` column it writes.
    public var column: String {
        switch self {
        case .tags: "tags"
        case .context: "context"
        }
    }

    /// The column's value, as stored, once `asset` is changed.
    public func storedValue(changing asset: ServedAsset) -> String {
        let changed = applied(to: asset)
        return switch self {
        case .tags: changed.tagsJSON
        case .context: changed.contextJSON
        }
    }
}

/// Which assets a listing selects, in what order, and where its page starts.
public struct ServedAssetQuery: Sendable, Equatable {
    public enum Filter: Sendable, Equatable {
        case all
        /// Public ids starting with the text (`folder/` lists a folder and its subfolders).
        case prefix(String)
        /// Exactly these public ids (Cloudinary takes up to 100).
        case publicIDs([String])
        /// Assets carrying the tag.
        case tag(String)
        /// Assets whose context has the key (with this value, when given).
        case context(key: String, value: String?)
        /// Assets a search expression selects (the Search API).
        case search(SearchExpression)
    }

    /// Cloudinary sorts a prefix listing by public id and the others by creation time.
    public enum Order: String, Sendable, Equatable {
        case publicID = "p"
        case createdAt = "c"
    }

    public var cloud: String
    public var filter: Filter
    public var order: Order
    public var ascending: Bool
    /// 1 to 500 (Cloudinary's bounds; its default is 10).
    public var limit: Int
    /// Where the page starts: after this asset.
    public var after: ServedAssetCursor?

    public init(cloud: String, filter: Filter = .all, order: Order = .createdAt, ascending: Bool = false, limit: Int = 10,
                after: ServedAssetCursor? = nil) {
        self.cloud = cloud
        self.filter = filter
        self.order = order
        self.ascending = ascending
        self.limit = min(500, max(1, limit))
        self.after = after
    }

    /// Whether `asset` comes after the cursor in this order (the memory queue's filter; the
    /// databases say the same in SQL).
    public func startsAfterCursor(_ asset: ServedAsset) -> Bool {
        guard let after else { return true }
        let key = ServedAssetCursor(asset, order: order)
        return ascending ? after < key : key < after
    }

    /// Whether the filter selects `asset` (the memory queue's filter).
    public func selects(_ asset: ServedAsset) -> Bool {
        guard asset.cloud == cloud else { return false }
        switch filter {
        case .all: return true
        case .prefix(let prefix): return asset.publicID.hasPrefix(prefix)
        case .publicIDs(let ids): return ids.contains(asset.publicID)
        case .tag(let tag): return asset.tags.contains(tag)
        case .context(let key, let value): return asset.context[key].map { value == nil || $0 == value } ?? false
        case .search(let expression): return expression.matches(asset)
        }
    }
}

/// The sort key of the last asset of a page. Creation times are whole microseconds (what
/// PostgreSQL keeps), so the key compares the same in every store.
public struct ServedAssetCursor: Sendable, Equatable, Comparable {
    public var order: ServedAssetQuery.Order
    /// Microseconds since 1970 (0 when ordered by public id).
    public var createdAt: Int64
    public var publicID: String

    public init(order: ServedAssetQuery.Order, createdAt: Int64, publicID: String) {
        self.order = order
        self.createdAt = order == .publicID ? 0 : createdAt
        self.publicID = publicID
    }

    public init(_ asset: ServedAsset, order: ServedAssetQuery.Order) {
        self.init(order: order, createdAt: Self.microseconds(asset.createdAt), publicID: asset.publicID)
    }

    public static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    /// Public ids compare by their UTF-8 bytes, as PostgreSQL's `COLLATE "C"` and SQLite's
    /// BINARY collation do (not by Swift's `<` on strings, which is by grapheme).
    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.createdAt != rhs.createdAt { return lhs.createdAt < rhs.createdAt }
        return Array(lhs.publicID.utf8).lexicographicallyPrecedes(Array(rhs.publicID.utf8))
    }

    /// The opaque `next_cursor` a client sends back: `<order>:<microseconds>:<public id>`, in
    /// base64url.
    public var token: String {
        Data("\(order.rawValue):\(createdAt):\(publicID)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A cursor from its token; nil for anything Derive did not write (the caller answers 400).
    public init?(token: String) {
        guard token.count <= 2048, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var base64 = token.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let order = ServedAssetQuery.Order(rawValue: String(parts[0])), let createdAt = Int64(parts[1]),
              !parts[2].isEmpty else { return nil }
        self.init(order: order, createdAt: createdAt, publicID: String(parts[2]))
    }
}

/// A page of a listing: its assets (without derivatives or notifications) and the next page's cursor.
public struct ServedAssetPage: Sendable, Equatable {
    public var assets: [ServedAsset]
    public var next: ServedAssetCursor?

    public init(assets: [ServedAsset], next: ServedAssetCursor?) {
        self.assets = assets
        self.next = next
    }

    /// The page from up to `limit + 1` assets read in order: the extra one says another page follows.
    public init(reading assets: [ServedAsset], query: ServedAssetQuery) {
        let page = Array(assets.prefix(query.limit))
        self.init(assets: page, next: assets.count > query.limit ? page.last.map { ServedAssetCursor($0, order: query.order) } : nil)
    }
}

/// Cloudinary's `tags` command: `add`, `remove`, `replace` and `remove_all`.
public enum TagChange: Sendable, Equatable {
    case add([String])
    case remove([String])
    case replace([String])
    case removeAll

    /// The tags after the change (added ones at the end, in the order given, each once).
    public func applied(to tags: [String]) -> [String] {
        switch self {
        case .add(let added):
            var result = tags
            for tag in added where !result.contains(tag) { result.append(tag) }
            return result
        case .remove(let removed): return tags.filter { !removed.contains($0) }
        case .replace(let replacement): return TagChange.add(replacement).applied(to: [])
        case .removeAll: return []
        }
    }
}

/// Cloudinary's `context` command: `add` (which replaces the values of keys already there)
/// and `remove_all`; `remove` takes away the keys given (the Admin API's `update` with empty values).
public enum ContextChange: Sendable, Equatable {
    case add([String: String])
    case remove([String])
    case removeAll

    public func applied(to context: [String: String]) -> [String: String] {
        switch self {
        case .add(let added): return context.merging(added) { $1 }
        case .remove(let keys): return context.filter { !keys.contains($0.key) }
        case .removeAll: return [:]
        }
    }
}

/// What a deletion changes, worked out from the rows it locked: the part both SQL stores share.
/// The statements that carry it out are each store's.
public struct ServedDeletionPlan: Sendable {
    /// A served derivative row as the plan reads and deletes it.
    public struct Derivative: Sendable, Equatable {
        public var publicID: String
        public var identity: String
        public var key: String
        public var jobID: JobID

        public init(row: DatabaseRow) throws(DeriveError) {
            publicID = try row.string("public_id")
            identity = try row.string("identity")
            key = try row.string("storage_key")
            jobID = JobID(try row.int("job_id"))
        }
    }

    public var deletion = ServedDeletion()
    /// The served derivative rows to delete (with `.whole`, every one of the assets).
    public var derivatives: [Derivative] = []
    /// The eager jobs whose job derivative rows all go: every eager job of an asset deleted
    /// whole or losing every derivative.
    public var eagerJobs: [JobID] = []
    /// With `.derivatives`, each found asset's eager jobs as kept (`keptEagerJobs`), as the
    /// column stores them.
    public var keptEager: [(publicID: String, eager: String)] = []

    /// `assets` are the rows of `publicIDs` found (`public_id`, `original_key`, `eager`),
    /// `derivatives` their derivative rows (`public_id`, `identity`, `storage_key`, `job_id`).
    public init(publicIDs: [String], assets: [DatabaseRow], derivatives: [DatabaseRow], scope: ServedDeletionScope) throws(DeriveError) {
        var originals: [String: (key: String, eager: [EagerJob])] = [:]
        for row in assets {
            var eager: [EagerJob] = []
            if case .array(let items) = try row.json("eager") { for item in items { eager.append(try EagerJob(json: item)) } }
            originals[try row.string("public_id")] = (try row.string("original_key"), eager)
        }
        var keys: Set<String> = []
        for row in derivatives {
            let derivative = try Derivative(row: row)
            guard originals[derivative.publicID] != nil, scope.includes(derivative.identity) else { continue }
            self.derivatives.append(derivative)
            deletion.derived[derivative.publicID, default: 0] += 1
            keys.insert(derivative.key)
        }
        for id in publicIDs where !deletion.found.contains(id) {
            guard let (original, eager) = originals[id] else { continue }
            deletion.found.append(id)
            deletion.derived[id, default: 0] += 0
            switch scope {
            case .whole:
                keys.insert(original)
                eagerJobs += eager.map(\.jobID)
            case .derivatives(let identities):
                let kept = scope.keptEagerJobs(eager)
                if identities == nil { eagerJobs += eager.map(\.jobID) }
                if kept != eager { keptEager.append((id, JSONWriter.compact(.array(kept.map(\.json))))) }
            }
        }
        deletion.keys = keys.sorted()
    }

    /// The served derivative rows to delete, as `[{"public_id", "identity"}]`.
    public var derivativesJSON: String {
        JSONWriter.compact(.array(derivatives.map { .object(["public_id": .string($0.publicID), "identity": .string($0.identity)]) }))
    }

    /// The job derivative rows the deleted served rows were recorded from, as `[{"job_id", "storage_key"}]`.
    public var jobRowsJSON: String {
        JSONWriter.compact(.array(derivatives.map { .object(["job_id": .int(Int($0.jobID)), "storage_key": .string($0.key)]) }))
    }

    /// The job id under which a deletion notes the keys it frees in the write ledger: no job
    /// has it (the queues number jobs from 1), so the notes are a finished job's, which the
    /// sweeps of unrecorded writes remove once nothing names the key.
    public static let ledgerJob: JobID = 0
}
