/// Container formats Derive recognises in sources.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp, gif, avif, heif, jxl, tiff, svg, pdf, bmp
    /// JPEG 2000, as a JP2 file or a bare J2K codestream.
    case jp2
    /// Netpbm: PBM, PGM, PPM (plain and raw) and PFM.
    case pnm
    /// Radiance RGBE (`.hdr`), high dynamic range: tone-mapped to sRGB on decode.
    case hdr
    /// OpenEXR, high dynamic range: tone-mapped to sRGB on decode.
    case exr
    /// gzip-compressed SVG: inflated (within the byte limit) and then read as SVG.
    case svgz
    /// Windows icon (and cursor): the largest image in the file is read.
    case ico
    /// Truevision TGA.
    case tga
    /// Photoshop document: its flattened composite is read, not the layers.
    case psd

    /// Vector and page formats are rendered at any scale, so a decode may be larger than the
    /// declared size (an SVG logo headed for a 2000 px banner is rendered at 2000 px).
    public var isScalable: Bool { self == .svg || self == .svgz || self == .pdf }

    /// Formats that can hold an animation of several frames.
    public var canAnimate: Bool { self == .gif || self == .webp }

    /// File extension for stored originals.
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .tiff: "tif"
        case .heif: "heic"
        case .pnm: "ppm"
        default: rawValue
        }
    }

    package static func parse(_ text: String) -> ImageFormat? {
        switch text.lowercased() {
        case "jpg", "jpeg": .jpeg
        case "tif", "tiff": .tiff
        case "heic", "heif": .heif
        case "j2k": .jp2
        case "ppm", "pgm", "pbm", "pfm": .pnm
        case "cur": .ico
        default: ImageFormat(rawValue: text.lowercased())
        }
    }
}

/// What an output is encoded as.
public enum OutputFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp, avif, gif, jxl, tiff
    /// JPEG 2000 (a JP2 file).
    case jp2
    /// A bare JPEG 2000 codestream (`.jpc`, `.j2k`): the JP2 file's contiguous codestream box.
    case jpc
    /// Uncompressed Windows bitmap.
    case bmp
    /// Windows icon: one image of at most 256x256.
    case ico
    /// HEIF with HEVC compression (libheif's x265 encoder).
    case heic
    /// SVG, written only by e_vectorize (its colour layers traced into paths by potrace).
    case svg
    /// A one-page PDF holding the image as a JPEG (ImagePDF), the page the image's size.
    case pdf
    /// Adobe Illustrator: the same PDF, named `.ai` (Illustrator files are PDF-compatible, and
    /// ImageMagick writes its AI format with its PDF writer).
    case ai
    /// Chosen by the engine among the allowed formats (alpha and animation respected).
    case auto
    /// The source's own format where Derive can write it (the default, as in Cloudinary).
    case original

    public var isConcrete: Bool { self != .auto && self != .original }
    /// Formats `f_auto` chooses among (DERIVE_AUTO_FORMATS); JPEG 2000, HEIC, BMP and ICO are written
    /// only when asked for by name.
    public var isAutoCandidate: Bool { [.jpeg, .png, .webp, .avif, .gif, .jxl, .tiff].contains(self) }
    /// BMP's alpha is shown by few viewers, so BMP outputs are flattened like JPEG; a bare JPEG
    /// 2000 codestream (jpc) cannot say a fourth component is alpha (that is the JP2 wrapper's
    /// cdef box), and readers take four components for CMYK, so it is flattened too.
    public var supportsAlpha: Bool { ![.jpeg, .bmp, .pdf, .ai, .jpc].contains(self) }
    /// Written as a one-page PDF (ImagePDF).
    public var isPDF: Bool { self == .pdf || self == .ai }
    /// The largest side the format can hold (ICO stores sizes in one byte, 256 as 0).
    public var maxSide: Int? { self == .ico ? 256 : nil }
    public var canAnimate: Bool { self == .gif || self == .webp }
    /// Formats that hold several pages or frames: the animated ones, and TIFF as a multi-page
    /// document (a page set `pg_2-4` of a TIFF stays a TIFF of those pages).
    public var holdsPages: Bool { canAnimate || self == .tiff }
    public var supportsLossless: Bool { [.webp, .avif, .jxl, .jp2, .jpc, .heic].contains(self) }
    public var supportsProgressive: Bool { [.jpeg, .png, .gif].contains(self) }
    public var supportsChromaSubsampling: Bool { [.jpeg, .avif, .heic].contains(self) }

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
        case .heic: 50
        case .jp2, .jpc: 48
        // TIFF is lossless (deflate) at 100; below it Derive writes JPEG-compressed TIFF.
        case .pdf, .ai: 80
        case .tiff, .png, .gif, .bmp, .ico, .svg, .auto, .original: 100
        }
    }

    /// The effort the canonical form writes for an output that gives none, on Derive's 0–9
    /// scale: the encoders' defaults before issue 40, frozen, because every stored output's
    /// identity holds them. An output without `effort` (or with this one) is encoded at the
    /// deployment's effort for the format (`EngineSettings.effort(for:format:)`).
    public var canonicalEffort: Int {
        switch self {
        case .jpeg: 4
        case .png: 6
        case .webp: 4
        case .avif: 4
        case .jxl: 7
        case .gif: 7
        case .tiff: 6
        case .heic: 4
        case .jp2, .jpc, .bmp, .ico, .svg, .pdf, .ai, .auto, .original: 4
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
        case .jp2: .jp2
        case .svg, .svgz, .pdf: .png
        case .heif, .bmp, .pnm, .hdr, .exr, .ico, .tga, .psd: hasAlpha ? .png : .jpeg
        }
    }

    package static func parse(_ text: String) -> OutputFormat? {
        switch text.lowercased() {
        case "jpg", "jpeg", "jpe": .jpeg
        case "tif", "tiff": .tiff
        case "heif": .heic
        default: OutputFormat(rawValue: text.lowercased())
        }
    }

    static let spellings = ["jpeg", "jpg", "png", "webp", "avif", "gif", "jxl", "tiff", "tif", "jp2", "jpc", "bmp", "ico", "heic", "heif",
                            "svg", "pdf", "ai", "auto", "original"]

    /// Why Derive does not write a format Cloudinary's `f_` accepts, or nil when the text is not
    /// one of them. Derive writes raster images only, with the encoders libvips has here.
    static func refusal(_ text: String) -> String? {
        let raster = "Derive writes jpg, png, webp, avif, gif, jxl, tiff, jp2, jpc, bmp, ico, heic and pdf and ai (the image in a PDF page), and svg from e_vectorize"
        let known = "f_\(text): known to Cloudinary, not supported by Derive:"
        switch text.lowercased() {
        case "ps", "eps", "eps3", "ept", "indd":
            return "\(known) format \(text) is a vector or page format; \(raster)"
        case "psd", "tga":
            return "\(known) format \(text) is read as a source but not written (it is an editing and interchange format, not one to deliver); \(raster)"
        case "djvu", "flif", "jxr", "hdp", "wdp", "bw", "dng", "arw", "cr2":
            return "\(known) format \(text) has no encoder in this libvips (camera raw formats are never written); \(raster)"
        case "glb", "gltf", "fbx", "usdz", "u3ma":
            return "\(known) format \(text) is a 3D model format; \(raster)"
        case "mp4", "webm", "mov", "ogv", "flv", "avi", "m3u8", "mpd", "ts", "mkv", "3gp", "wmv", "m2ts", "m4v", "mp3", "m4a", "wav", "ogg", "aac", "flac", "aiff", "aif", "opus":
            return "\(known) format \(text) is a video or audio format; Derive makes images; \(raster)"
        default:
            return nil
        }
    }
}
