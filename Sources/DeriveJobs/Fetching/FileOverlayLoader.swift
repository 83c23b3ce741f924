import DeriveLanguage
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
        let location = try SourceAddress(reference)
        if let path = location.localFile {
            url = URL(fileURLWithPath: path)
        } else if case .path = location {
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
        } else {
            throw DeriveError(.sourceRefused, "overlay \(Quoted(Redacted.url(reference))) is a URL; this command reads overlays from files only")
        }
        return try LocalFile.read(url, maxBytes: maxBytes)
    }
}

public enum LocalFile {
    /// Reads a whole file within `maxBytes` (`SourceSizeLimit.read`).
    public static func read(_ url: URL, maxBytes: Int) throws(DeriveError) -> SourceImage {
        SourceImage(bytes: try SourceSizeLimit(maxBytes).read(file: url.path), location: url.path)
    }
}
