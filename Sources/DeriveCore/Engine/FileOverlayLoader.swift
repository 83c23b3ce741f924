import Foundation

/// Overlays from a local folder: `l_logo` is `<root>/logo.<any image extension>`, `l_brand:logo`
/// is `<root>/brand/logo.*`; absolute paths and `file://` URLs are read as they are. Names
/// cannot climb out of the root.
public struct FileOverlayLoader: OverlayLoader {
    public var root: URL
    public var maxBytes: Int

    public init(root: URL, maxBytes: Int = SourceLimits.default.maxInputBytes) {
        self.root = root
        self.maxBytes = maxBytes
    }

    static let extensions = ["png", "webp", "jpg", "jpeg", "gif", "avif", "svg", "tif", "tiff", "jxl", "heic"]

    public func load(_ reference: String) throws(DeriveError) -> SourceImage {
        let url: URL
        if reference.hasPrefix("file://"), let fileURL = URL(string: reference), fileURL.isFileURL {
            url = fileURL
        } else if reference.hasPrefix("/") {
            url = URL(fileURLWithPath: reference)
        } else if reference.contains("://") || reference.hasPrefix("data:") {
            throw DeriveError(.sourceRefused, "overlay \(Quoted(reference)) is a URL; this command reads overlays from files only")
        } else {
            let parts = reference.split(separator: "/").map(String.init)
            guard !parts.isEmpty, !parts.contains(where: { $0 == ".." || $0 == "." || $0.isEmpty }) else {
                throw DeriveError(.sourceRefused, "overlay name \(Quoted(reference)) may not leave the overlay folder")
            }
            let base = parts.reduce(root) { $0.appendingPathComponent($1) }
            let candidates = [base] + Self.extensions.map { base.appendingPathExtension($0) }
            guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) && !$0.hasDirectoryPath }) else {
                throw DeriveError(.sourceRefused, "no overlay named \(Quoted(reference)) in \(root.path)")
            }
            url = found
        }
        return try LocalFile.read(url, maxBytes: maxBytes)
    }
}

public enum LocalFile {
    /// Reads a whole file, refusing one larger than `maxBytes` before reading it.
    public static func read(_ url: URL, maxBytes: Int) throws(DeriveError) -> SourceImage {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        guard let size = attributes?[.size] as? Int else {
            throw DeriveError(.sourceRefused, "cannot read \(url.path): no such file")
        }
        if size > maxBytes {
            throw DeriveError(.limitExceeded, "\(url.path) is \(size) bytes; the limit is \(maxBytes) (DERIVE_MAX_INPUT_BYTES)")
        }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw DeriveError(.sourceRefused, "cannot read \(url.path)")
        }
        return SourceImage(bytes: [UInt8](data), location: url.path)
    }
}
