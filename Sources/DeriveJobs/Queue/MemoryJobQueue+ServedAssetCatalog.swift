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

    public func deleteServedAssets(cloud: String, publicIDs: [String]) throws(DeriveError) -> [String] {
        try withState { state, _ in
            publicIDs.filter { id in state.served.removeValue(forKey: ServedKey(cloud: cloud, publicID: id)) != nil }
        }
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
