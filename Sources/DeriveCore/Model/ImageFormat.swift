/// Container formats Derive recognises in sources.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp, gif, avif, heif, jxl, tiff, svg, pdf, bmp

    /// Vector and page formats are rendered at any scale, so a decode may be larger than the
    /// declared size (an SVG logo headed for a 2000 px banner is rendered at 2000 px).
    public var isScalable: Bool { self == .svg || self == .pdf }

    /// Formats that can hold an animation of several frames.
    public var canAnimate: Bool { self == .gif || self == .webp }

    /// File extension for stored originals.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .tiff: "tif"
        case .heif: "heic"
        default: rawValue
        }
    }

    static func parse(_ text: String) -> ImageFormat? {
        switch text.lowercased() {
        case "jpg", "jpeg": .jpeg
        case "tif", "tiff": .tiff
        case "heic", "heif": .heif
        default: ImageFormat(rawValue: text.lowercased())
        }
    }
}

/// What an output is encoded as.
public enum OutputFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp, avif, gif, jxl, tiff
    /// Chosen by the engine among the allowed formats (alpha and animation respected).
    case auto
    /// The source's own format where Derive can write it (the default, as in Cloudinary).
    case original

    public var isConcrete: Bool { self != .auto && self != .original }
    public var supportsAlpha: Bool { self != .jpeg }
    public var canAnimate: Bool { self == .gif || self == .webp }
    public var supportsLossless: Bool { [.webp, .avif, .jxl].contains(self) }
    public var supportsProgressive: Bool { [.jpeg, .png, .gif].contains(self) }
    public var supportsChromaSubsampling: Bool { [.jpeg, .avif].contains(self) }

    /// File extension for storage keys.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .tiff: "tif"
        default: rawValue
        }
    }

    /// The quality used when none is given, per encoder (libvips' defaults where sensible).
    public var defaultQuality: Int {
        switch self {
        case .jpeg, .webp: 80
        case .avif: 50
        case .jxl: 75
        // TIFF is lossless (deflate) at 100; below it Derive writes JPEG-compressed TIFF.
        case .tiff, .png, .gif, .auto, .original: 100
        }
    }

    /// The encoder effort used when none is given, on Derive's 0–9 scale.
    public var defaultEffort: Int {
        switch self {
        case .jpeg: 4
        case .png: 6
        case .webp: 4
        case .avif: 4
        case .jxl: 7
        case .gif: 7
        case .tiff: 6
        case .auto, .original: 4
        }
    }

    /// The format "original" resolves to for a source format.
    public static func original(for source: ImageFormat, hasAlpha: Bool) -> OutputFormat {
        switch source {
        case .jpeg: .jpeg
        case .png: .png
        case .webp: .webp
        case .gif: .gif
        case .avif: .avif
        case .jxl: .jxl
        case .tiff: .tiff
        case .svg, .pdf: .png
        case .heif, .bmp: hasAlpha ? .png : .jpeg
        }
    }

    static func parse(_ text: String) -> OutputFormat? {
        switch text.lowercased() {
        case "jpg", "jpeg": .jpeg
        case "tif", "tiff": .tiff
        default: OutputFormat(rawValue: text.lowercased())
        }
    }

    static let spellings = ["jpeg", "jpg", "png", "webp", "avif", "gif", "jxl", "tiff", "tif", "auto", "original"]
}
