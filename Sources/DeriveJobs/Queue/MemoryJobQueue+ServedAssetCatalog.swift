import DeriveLanguage
import Foundation

/// The management calls over the memory queue's records: each one critical section, as each
/// of the SQL stores' is one transaction.
extension MemoryJobQueue: ServedAssetCatalog {
    public func listServedAssets(_ query: ServedAssetQuery) throws(DeriveError) -> ServedAssetPage {
        try withState { state, _ in
            let selected = state.served.values.filter { query.selects($0) && query.startsAfterCursor($0) }
                .sorted { a, b in
                    let (x, y) = (ServedAssetCursor(a, order: query.order), ServedAssetCursor(b, order: query.order))
                    return query.ascending ? x < y : y < x
                }
                .prefix(query.limit + 1)
                .map { asset in
                    var listed = asset
                    listed.derivatives = [:]
                    return listed
                }
            return ServedAssetPage(reading: Array(selected), query: query)
        }
    }

    public func change(_ change: AssetChange, cloud: String, publicIDs: [String]) throws(DeriveError) -> [String] {
        try withState { state, _ in
            publicIDs.filter { id in
                let key = ServedKey(cloud: cloud, publicID: id)
                guard let asset = state.served[key] else { return false }
                state.served[key] = change.applied(to: asset)
                return true
            }
        }
    }

    public func countServedAssets(_ query: ServedAssetQuery) throws(DeriveError) -> [String: Int] {
        try withState { state, _ in
            state.served.values.filter(query.selects).reduce(into: [:]) { counts, asset in counts[asset.format, default: 0] += 1 }
        }
    }

    public func deleteServedAssets(cloud: String, publicIDs: [String], scope: ServedDeletionScope, store: String) throws(DeriveError) -> ServedDeletion {
        try withState { state, _ in
            var deletion = ServedDeletion()
            for id in publicIDs {
                let key = ServedKey(cloud: cloud, publicID: id)
                guard var asset = state.served[key], !deletion.found.contains(id) else { continue }
                deletion.found.append(id)
                let forgotten = asset.derivatives.values.filter { scope.includes($0.identity) }
                deletion.derived[id] = forgotten.count
                deletion.keys += forgotten.map(\.key)
                switch scope {
                case .whole:
                    deletion.keys.append(asset.originalKey)
                    state.served[key] = nil
                case .derivatives:
                    for derivative in forgotten { asset.derivatives[derivative.identity] = nil }
                    asset.eagerJobs = scope.keptEagerJobs(asset.eagerJobs)
                    state.served[key] = asset
                }
            }
            deletion.keys = Array(Set(deletion.keys)).sorted()
            return deletion
        }
    }

    public func renameServedAsset(cloud: String, from: String, to: String, overwrite: Bool, store: String) throws(DeriveError) -> ServedRename {
        try withState { state, _ in
            let (fromKey, toKey) = (ServedKey(cloud: cloud, publicID: from), ServedKey(cloud: cloud, publicID: to))
            guard var asset = state.served[fromKey] else { return .notFound }
            guard from != to else { return .renamed(replaced: ServedDeletion()) }
            var replaced = ServedDeletion()
            if let target = state.served[toKey] {
                guard overwrite else { return .targetExists }
                replaced = ServedDeletion(found: [to], derived: [to: target.derivatives.count],
                                          keys: Array(Set(target.derivatives.values.map(\.key) + [target.originalKey])).sorted())
            }
            asset.publicID = to
            state.served[fromKey] = nil
            state.served[toKey] = asset
            for index in state.notifications.indices where state.notifications[index].cloud == cloud && state.notifications[index].publicID == from {
                state.notifications[index].publicID = to
            }
            return .renamed(replaced: replaced)
        }
    }

    public func addEagerJob(cloud: String, publicID: String, version: Int, job: NewJob, outputs: [EagerOutput]) throws(DeriveError) -> JobID? {
        try Self.validate(job)
        return try withState { state, now in
            let key = ServedKey(cloud: cloud, publicID: publicID)
            guard var asset = state.served[key], asset.version == version else { return nil }
            let id = state.enqueue(job, at: now).id
            asset.eagerJobs.append(EagerJob(jobID: id, outputs: outputs))
            state.served[key] = asset
            return id
        }
    }

    public func servedUsage(cloud: String) throws(DeriveError) -> ServedUsage {
        try withState { state, _ in
            let assets = state.served.values.filter { $0.cloud == cloud }
            let derivatives = assets.flatMap(\.derivatives.values)
            return ServedUsage(assets: assets.count, assetBytes: assets.reduce(0) { $0 + $1.bytes },
                               derivatives: derivatives.count, derivativeBytes: derivatives.reduce(0) { $0 + $1.bytes })
        }
    }

    /// The memory queue keeps no job derivative rows and no write ledger: a key is in use while
    /// a served asset or derivative names it.
    public func releaseServedObject(_ key: String, store: String, delete: (String) throws(DeriveError) -> Void) throws(DeriveError) -> Bool {
        try withState { state, _ throws(DeriveError) in
            let named = state.served.values.contains { asset in
                asset.originalKey == key || asset.derivatives.values.contains { $0.key == key }
            }
            guard !named else { return false }
            try delete(key)
            return true
        }
    }

    public func holdingServedObject(_ key: String, store: String, _ body: () throws(DeriveError) -> Void) throws(DeriveError) {
        try withState { _, _ throws(DeriveError) in try body() }
    }

    public func servedTags(cloud: String, prefix: String?, limit: Int, after: String?) throws(DeriveError) -> (tags: [String], next: String?) {
        try withState { state, _ in
            let all = Set(state.served.values.filter { $0.cloud == cloud }.flatMap(\.tags))
                .filter { tag in (prefix.map { tag.hasPrefix($0) } ?? true) && (after.map { Self.bytesPrecede($0, tag) } ?? true) }
                .sorted { Self.bytesPrecede($0, $1) }
            let page = Array(all.prefix(max(1, limit)))
            return (page, all.count > page.count ? page.last : nil)
        }
    }

    private static func bytesPrecede(_ a: String, _ b: String) -> Bool {
        Array(a.utf8).lexicographicallyPrecedes(Array(b.utf8))
    }
}
