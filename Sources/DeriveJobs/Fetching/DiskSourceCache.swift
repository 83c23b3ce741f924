import DeriveLanguage
import Foundation
import Synchronization

/// A size-capped cache of fetched sources on local disk. Each entry keeps the body with its
/// `ETag`, `Last-Modified` and freshness lifetime: fresh entries are served without a request,
/// stale ones revalidated. Over capacity, least recently used entries are evicted down to the
/// low-water mark. Writes are atomic (temporary file and rename), so several processes may
/// share a folder.
public final class DiskSourceCache: Sendable {
    public struct Entry: Sendable, Hashable, Codable {
        public var url: String
        public var etag: String?
        public var lastModified: String?
        public var storedAt: Date
        public var lifetime: Double
        public var noCache: Bool
        public var size: Int

        public func isFresh(now: Date = Date()) -> Bool {
            Freshness(noCache: noCache, lifetime: lifetime).isFresh(storedAt: storedAt, now: now)
        }
    }

    private struct Index {
        var sizes: [String: Int] = [:]
        var lastUse: [String: Date] = [:]
        var total = 0
    }

    public let directory: URL
    public let capacity: Int
    public let lowWater: Int
    private let index = Mutex(Index())

    public init(directory: URL, capacity: Int, lowWaterFraction: Double = 0.8) throws(DeriveError) {
        self.directory = directory
        self.capacity = capacity
        self.lowWater = Int(Double(capacity) * lowWaterFraction)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.contentModificationDateKey, .fileSizeKey])
            var loaded = Index()
            for file in files where file.pathExtension == "body" {
                let name = file.deletingPathExtension().lastPathComponent
                let values = try? file.resourceValues(forKeys: [.contentModificationDateKey, .fileSizeKey])
                let size = values?.fileSize ?? 0
                loaded.sizes[name] = size
                loaded.lastUse[name] = values?.contentModificationDate ?? .distantPast
                loaded.total += size
            }
            index.withLock { $0 = loaded }
        } catch {
            throw DeriveError(.storageFailed, "cannot use the source cache at \(directory.path): \(error.localizedDescription)")
        }
    }

    public var totalBytes: Int { index.withLock { $0.total } }
    public var count: Int { index.withLock { $0.sizes.count } }

    static func name(_ url: String) -> String { SHA256.hex(url) }

    /// The entry for `url`, if there is one whose body is in place; marks it recently used.
    public func entry(_ url: String) -> Entry? {
        let name = Self.name(url)
        let bodyURL = directory.appendingPathComponent(name + ".body")
        guard let metadata = FileManager.default.contents(atPath: directory.appendingPathComponent(name + ".json").path),
              let entry = try? JSONDecoder().decode(Entry.self, from: metadata), entry.url == url,
              let attributes = try? FileManager.default.attributesOfItem(atPath: bodyURL.path),
              (attributes[.size] as? Int) == entry.size else {
            return nil
        }
        let now = Date()
        try? FileManager.default.setAttributes([.modificationDate: now], ofItemAtPath: bodyURL.path)
        index.withLock { $0.lastUse[name] = now }
        return entry
    }

    /// The entry's body: read only when it is used (fresh, or confirmed by a 304).
    public func body(_ entry: Entry) -> [UInt8]? {
        let bodyURL = directory.appendingPathComponent(Self.name(entry.url) + ".body")
        guard let body = FileManager.default.contents(atPath: bodyURL.path), body.count == entry.size else { return nil }
        return [UInt8](body)
    }

    /// The entry and its body.
    public func lookup(_ url: String) -> (entry: Entry, body: [UInt8])? {
        guard let entry = entry(url), let body = body(entry) else { return nil }
        return (entry, body)
    }

    /// Stores a body (when its freshness allows) and evicts down to the low-water mark if the
    /// cache grew past its capacity.
    public func store(_ url: String, body: [UInt8], freshness: Freshness, now: Date = Date()) {
        guard freshness.isCacheable, body.count <= capacity else { return }
        let name = Self.name(url)
        let entry = Entry(url: url, etag: freshness.etag, lastModified: freshness.lastModified, storedAt: now,
                          lifetime: freshness.lifetime, noCache: freshness.noCache, size: body.count)
        guard let metadata = try? JSONEncoder().encode(entry),
              write(Data(body), to: name + ".body"), write(metadata, to: name + ".json") else { return }
        let evict = index.withLock { index -> [String] in
            index.total += body.count - (index.sizes[name] ?? 0)
            index.sizes[name] = body.count
            index.lastUse[name] = now
            guard index.total > capacity else { return [] }
            var victims: [String] = []
            for candidate in index.lastUse.sorted(by: { $0.value < $1.value }).map(\.key) where index.total > lowWater {
                guard candidate != name else { continue }
                index.total -= index.sizes[candidate] ?? 0
                index.sizes[candidate] = nil
                index.lastUse[candidate] = nil
                victims.append(candidate)
            }
            return victims
        }
        for victim in evict {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(victim + ".body"))
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(victim + ".json"))
        }
    }

    /// After a 304: the stored body is good for another lifetime.
    public func refresh(_ url: String, entry: Entry, freshness: Freshness, now: Date = Date()) {
        var updated = entry
        updated.storedAt = now
        updated.lifetime = freshness.lifetime
        updated.noCache = freshness.noCache
        updated.etag = freshness.etag ?? entry.etag
        updated.lastModified = freshness.lastModified ?? entry.lastModified
        if let metadata = try? JSONEncoder().encode(updated) { _ = write(metadata, to: Self.name(url) + ".json") }
    }

    private func write(_ data: Data, to file: String) -> Bool {
        let target = directory.appendingPathComponent(file)
        let temporary = directory.appendingPathComponent(".\(file).\(UUID().uuidString).tmp")
        do {
            try data.write(to: temporary)
            guard rename(temporary.path, target.path) == 0 else {
                try? FileManager.default.removeItem(at: temporary)
                return false
            }
            return true
        } catch {
            return false
        }
    }
}
