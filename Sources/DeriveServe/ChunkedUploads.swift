import DeriveJobs
import DeriveLanguage
import Foundation
import Synchronization

/// Chunked uploads as the SDKs' `upload_large` sends them: each part a whole signed upload
/// request with `X-Unique-Upload-Id` and `Content-Range: bytes <first>-<last>/<total>`. Parts
/// are kept in the store (`serve/<cloud>/chunks/<id>/<first>`) with a list of those received,
/// so an upload resumes after `derive serve` restarts and any instance sharing the store can
/// take the next part; once every byte has arrived the parts are joined and deleted. Bounded:
/// the total is at most the upload limit, and at most `maxUnfinished` uploads are unfinished in
/// one process (parts of an upload it has not seen count once it sees one).
final class ChunkedUploads: Sendable {
    let store: any AssetStore
    let cloud: String
    let maxBytes: Int
    static let maxUnfinished = 100
    private let state = Mutex<Set<String>>([])

    init(store: any AssetStore, cloud: String, maxBytes: Int) {
        self.store = store
        self.cloud = cloud
        self.maxBytes = maxBytes
    }

    struct Manifest: Codable {
        var total: Int
        /// First and last byte of each part received.
        var parts: [[Int]]
    }

    /// `bytes <first>-<last>/<total>`.
    static func parseRange(_ text: String) -> (first: Int, last: Int, total: Int)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let rest = trimmed.dropFirst(6)
        let halves = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2, let total = Int(halves[1]) else { return nil }
        let ends = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard ends.count == 2, let first = Int(ends[0]), let last = Int(ends[1]) else { return nil }
        guard first >= 0, last >= first, total > last else { return nil }
        return (first, last, total)
    }

    /// Keeps a part; returns the whole content once every byte has arrived, nil before.
    func receive(_ part: [UInt8], range: String, uploadID: String?) async throws -> [UInt8]? {
        guard let uploadID, (1...64).contains(uploadID.count),
              uploadID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-".contains($0)) }) else {
            throw ServeError(400, "A chunked upload needs X-Unique-Upload-Id (1 to 64 of A-Z a-z 0-9 _ -)")
        }
        guard let (first, last, total) = Self.parseRange(range) else { throw ServeError(400, "Content-Range must be bytes <first>-<last>/<total>") }
        guard total <= maxBytes else { throw ServeError(413, "File size too large. Got \(total). Maximum is \(maxBytes).") }
        guard last - first + 1 == part.count else {
            throw ServeError(400, "Content-Range names \(last - first + 1) bytes but the part has \(part.count)")
        }
        let admitted = state.withLock { uploads -> Bool in
            if uploads.contains(uploadID) { return true }
            guard uploads.count < Self.maxUnfinished else { return false }
            uploads.insert(uploadID)
            return true
        }
        guard admitted else { throw ServeError(420, "Too many unfinished chunked uploads: finish or abandon some first") }
        let folder = "serve/\(cloud)/chunks/\(uploadID)"
        do {
            return try await CloudinaryService.offPool { [store] () throws(DeriveError) -> [UInt8]? in
                _ = try store.put(part, key: try StorageKey("\(folder)/\(first)"), contentType: "application/octet-stream")
                // One process at a time changes the list (the lock); the parts are written first,
                // so the list never names a part that is not there.
                let manifestKey = try StorageKey("\(folder)/manifest.json")
                let manifest: Manifest? = try self.state.withLock { _ throws(DeriveError) -> Manifest? in
                    var manifest = Manifest(total: total, parts: [])
                    if let bytes = try store.get(manifestKey), let read = try? JSONDecoder().decode(Manifest.self, from: Data(bytes)) { manifest = read }
                    guard manifest.total == total else {
                        throw DeriveError(.invalidJob, "this upload's parts said \(manifest.total) bytes in all, this one \(total)")
                    }
                    if !manifest.parts.contains([first, last]) { manifest.parts.append([first, last]) }
                    let data = (try? JSONEncoder().encode(manifest)) ?? Data()
                    _ = try store.put([UInt8](data), key: manifestKey, contentType: "application/json")
                    return manifest
                }
                guard let manifest, Self.covers(manifest) else { return nil }
                var whole = [UInt8](repeating: 0, count: total)
                for part in manifest.parts.sorted(by: { $0[0] < $1[0] }) {
                    guard let bytes = try store.get(try StorageKey("\(folder)/\(part[0])")), bytes.count == part[1] - part[0] + 1 else {
                        throw DeriveError(.storageFailed, "a part of this upload is missing from the store", retryable: false)
                    }
                    whole.replaceSubrange(part[0]...part[1], with: bytes)
                }
                for part in manifest.parts { try? store.delete(try StorageKey("\(folder)/\(part[0])")) }
                try? store.delete(manifestKey)
                self.state.withLock { _ = $0.remove(uploadID) }
                return whole
            }
        } catch {
            state.withLock { _ = $0.remove(uploadID) }
            throw ServeError(400, "The chunked upload cannot go on: \(error.detail)")
        }
    }

    /// Whether the parts cover every byte from 0 to the total.
    static func covers(_ manifest: Manifest) -> Bool {
        var next = 0
        for part in manifest.parts.sorted(by: { $0[0] < $1[0] }) where part.count == 2 {
            guard part[0] <= next else { return false }
            next = max(next, part[1] + 1)
        }
        return next >= manifest.total
    }
}
