import DeriveDigest
import DeriveLanguage
import Foundation

/// Originals in the asset store, content-addressed (`originals/<sha256>.<ext>`) so that any
/// worker reads them back and the same image stored twice is one object: what `derive upload`
/// and `derive serve`'s upload API store before queuing the outputs.
public enum Originals {
    /// What was stored, and what it is.
    public struct Stored: Sendable {
        public var object: StoredObject
        public var format: ImageFormat
        public var sha256: String
        /// Where a job reads it back (`store.sourceLocation(of:)`).
        public var location: String
    }

    /// The key for content with this hash and format.
    public static func key(sha256: String, format: ImageFormat) throws(DeriveError) -> StorageKey {
        try StorageKey("originals/\(sha256).\(format.fileExtension)")
    }

    /// Stores image bytes held in memory; refuses what is not an image Derive recognises.
    public static func store(_ bytes: [UInt8], in store: any AssetStore, maxBytes: Int, name: String) throws(DeriveError) -> Stored {
        try SourceSizeLimit(maxBytes).check(bytes.count, of: name)
        guard let format = ImageSniffer.format(of: Array(bytes.prefix(64))) else {
            throw DeriveError(.unsupportedFormat, "\(name) is not an image format Derive recognises")
        }
        let sha256 = ContentHash.sha256(bytes)
        let key = try key(sha256: sha256, format: format)
        let object = try store.put(bytes, key: key, contentType: format.mediaType)
        return Stored(object: object, format: format, sha256: sha256, location: store.sourceLocation(of: key))
    }

    /// Stores a local file, hashed as it is read (a large file is never held whole).
    public static func store(file: URL, in store: any AssetStore, maxBytes: Int) throws(DeriveError) -> Stored {
        let path = file.path
        guard let handle = FileHandle(forReadingAtPath: path) else { throw DeriveError(.sourceUnavailable, "cannot read \(path)", retryable: false) }
        defer { try? handle.close() }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        try SourceSizeLimit(maxBytes).check(size, of: path)
        let head = [UInt8](handle.readData(ofLength: 64))
        guard let format = ImageSniffer.format(of: head) else { throw DeriveError(.unsupportedFormat, "\(path) is not an image format Derive recognises") }
        var hash = ContentHash()
        hash.update(head)
        while true {
            let chunk = handle.readData(ofLength: 1 << 20)
            if chunk.isEmpty { break }
            hash.update([UInt8](chunk))
        }
        let sha256 = hash.finalizeHex()
        let key = try key(sha256: sha256, format: format)
        let object = try store.put(file: file, key: key, contentType: format.mediaType)
        return Stored(object: object, format: format, sha256: sha256, location: store.sourceLocation(of: key))
    }
}
