/// One named output of a job: a chain and how to encode its result.
public struct OutputSpec: Sendable, Hashable {
    /// Unique within the job; becomes part of the storage key (`[A-Za-z0-9._-]`, 1–64 chars).
    public var name: String
    public var chain: [Step]
    public var settings: OutputSettings
    /// What a Cloudinary string said that Derive read as Cloudinary does and left out
    /// (`c_fill` without a size); shown in the plan, not part of the identity.
    public var notes: [String]

    public init(name: String, chain: [Step], settings: OutputSettings = OutputSettings(), notes: [String] = []) {
        self.name = name
        self.chain = chain
        self.settings = settings
        self.notes = notes
    }
}

/// Encoding settings as written; `nil` means "the default", which canonicalisation fills in.
public struct OutputSettings: Sendable, Hashable {
    public var format: OutputFormat?
    public var quality: Quality?
    public var strip: Bool?
    public var progressive: Bool?
    public var lossless: Bool?
    public var effort: Int?
    public var chromaSubsampling: ChromaSubsampling?
    /// `false` (`a_ignore`) keeps the stored pixel orientation instead of applying EXIF's.
    public var autoOrient: Bool?
    /// 1-based page or frame (`pg_<n>`); without it animations keep every frame.
    public var frame: Int?
    /// Several pages or frames in order (`pg_2-4`, `pg_1;3;5`, `pg_5-`): the output is an
    /// animation of them. A set of one page is `frame`.
    public var pages: PageSet?
    public var breakpoints: Breakpoints?
    /// Density variants (`dpr_auto`: 1, 2 and 3): the output once per density, every size of
    /// the chain multiplied by it, each stored and recorded with its width.
    public var densities: [Double]?
    /// A format set (`"formats": ["avif", "webp", "jpeg"]`, for `<picture>`): the output is
    /// made once per format, from the same pixels, each with its own identity and key.
    public var formats: [OutputFormat]?
    /// `fl_strip_profile` (and `cs_tinysrgb`): no ICC profile in the output even when the other
    /// metadata is kept (`strip` off); the pixels are sRGB either way.
    public var stripProfile: Bool?
    /// `dn_<dpi>`: the density vector and page sources (SVG, PDF) are rasterised at (72 is
    /// their own), and the resolution written in the output.
    public var density: Int?
    /// `d_<image>`: the image this output is made from when the job's source does not exist
    /// (HTTP 404 or 410, no such key or file), named as overlays are (`d_avatar.png`, `d_brand:avatar`).
    public var defaultImage: String?
    /// `fl_clip` / `fl_clip_evenodd`: the source clipped to a path stored in it.
    public var clip: ClipSetting?
    /// `pg_name:` / `pg_embedded:`: the output is made from these layers of a Photoshop
    /// document, or from the file embedded in one of its smart objects, instead of the whole.
    public var psd: PSDSelection?
    /// `fl_png8`, `fl_png24`, `fl_png32`: a PNG output's colour type (palette, RGB, RGBA)
    /// instead of the smaller of truecolour and palette.
    public var pngType: PNGType?
    /// `fl_lossy`: a PNG output quantised to a palette at the output's quality; a GIF's
    /// animation frames stored with small differences left out (lossy LZW's effect).
    public var lossy: Bool?
    /// `e_loop[:<additional plays>]`: how many times an animation plays, 0 for forever
    /// (`e_loop`); `e_loop:2` plays it 3 times. Without it, the source's count is kept.
    public var loop: Int?
    /// `dl_<ms>`: every animation frame shown for this long, in milliseconds.
    public var delay: Int?
    /// `fl_tiff8_lzw`: a TIFF output compressed with LZW (lossless) instead of deflate.
    public var tiffLZW: Bool?
    /// `fl_ignore_mask_channels`: a TIFF source's extra channel that its ExtraSamples tag marks
    /// as unspecified (a mask channel, not alpha) is not used as alpha: it is dropped.
    public var ignoreMaskChannels: Bool?
    /// `cs_cmyk` (a CMYK file) or `cs_keep_cmyk` (CMYK when the source is), JPEG and TIFF.
    public var cmyk: CMYKOutput?
    /// `fl_keep_attribution`: metadata stripped but for the EXIF copyright and artist.
    public var keepAttribution: Bool?
    /// `fl_getinfo`: a JSON document beside the image with the source's and the output's facts,
    /// the crops made and the faces found (`GetInfo`), as Cloudinary returns one.
    public var getInfo: Bool?

    public init(format: OutputFormat? = nil, quality: Quality? = nil, strip: Bool? = nil, progressive: Bool? = nil,
                lossless: Bool? = nil, effort: Int? = nil, chromaSubsampling: ChromaSubsampling? = nil,
                autoOrient: Bool? = nil, frame: Int? = nil, breakpoints: Breakpoints? = nil, formats: [OutputFormat]? = nil,
                densities: [Double]? = nil) {
        self.densities = densities
        self.formats = formats
        self.format = format
        self.quality = quality
        self.strip = strip
        self.progressive = progressive
        self.lossless = lossless
        self.effort = effort
        self.chromaSubsampling = chromaSubsampling
        self.autoOrient = autoOrient
        self.frame = frame
        self.breakpoints = breakpoints
    }
}

/// A PNG output's colour type, as Cloudinary's `fl_png8`, `fl_png24` and `fl_png32` name it.
public enum PNGType: String, Sendable, Hashable, CaseIterable {
    /// 8-bit palette (with transparency in the palette, as libimagequant quantises it).
    case png8
    /// 24-bit RGB: transparency flattened onto white.
    case png24
    /// 32-bit RGBA: an alpha channel even when the image is opaque.
    case png32
}

public enum Quality: Sendable, Hashable {
    case value(Int)
    /// Perceptual search for the lowest quality within a difference target (`q_auto[:level]`).
    case auto(AutoQuality)
    /// `q_<expression>` (`q_$q`, `q_100_sub_pc_mul_5`): the planner evaluates it on the source
    /// into a value, so the engine never sees one.
    case expression(ArithmeticExpression)

    public var text: String {
        switch self {
        case .value(let q): String(q)
        case .auto(let level): "auto:\(level.rawValue)"
        case .expression(let e): e.canonicalText
        }
    }

    var isAuto: Bool {
        if case .auto = self { return true }
        return false
    }
}

public enum AutoQuality: String, Sendable, Hashable, CaseIterable {
    case best, good, eco, low
}

public enum ChromaSubsampling: String, Sendable, Hashable, CaseIterable {
    /// The encoder's choice (libvips: 4:2:0 below quality 90).
    case auto
    case full = "4:4:4"
    case half = "4:2:0"

    /// Cloudinary's `q_<n>:444` / `q_<n>:420` suffix.
    var cloudinarySuffix: String? {
        switch self {
        case .auto: nil
        case .full: "444"
        case .half: "420"
        }
    }
}

/// Responsive breakpoints: emit the output at several widths between `minWidth` and
/// `maxWidth` (capped at the width the chain produces), spaced by a fixed step or so that
/// consecutive files differ by at least `bytes`.
public struct Breakpoints: Sendable, Hashable {
    public enum Spacing: Sendable, Hashable {
        case step(Int)
        case bytes(Int)
    }

    public var minWidth: Int
    public var maxWidth: Int
    public var spacing: Spacing
    public var maxCount: Int

    public static let defaultMinWidth = 50
    public static let defaultMaxWidth = 1000
    public static let defaultBytes = 20_000
    public static let defaultMaxCount = 20

    public init(minWidth: Int = defaultMinWidth, maxWidth: Int = defaultMaxWidth,
                spacing: Spacing = .bytes(defaultBytes), maxCount: Int = defaultMaxCount) {
        self.minWidth = minWidth
        self.maxWidth = maxWidth
        self.spacing = spacing
        self.maxCount = maxCount
    }
}

/// A job as submitted: a source and either outputs or the name of a preset that supplies them.
public struct JobSpec: Sendable, Hashable {
    public static let currentVersion = 1

    public var version: Int
    public var source: String?
    public var outputs: [OutputSpec]
    public var preset: String?
    /// The asset's tags and context (`"tags"`, `"context"`), stored on its row and read by
    /// conditions (`if_!sale!_in_tags`).
    public var asset: AssetFacts

    public init(version: Int = JobSpec.currentVersion, source: String?, outputs: [OutputSpec] = [], preset: String? = nil,
                asset: AssetFacts = .none) {
        self.version = version
        self.source = source
        self.outputs = outputs
        self.preset = preset
        self.asset = asset
    }
}

extension OutputSettings {
    /// Fills the fields left open here from `other` (settings can come from JSON fields, from a
    /// chain string and from presets); returns the fields that both set to different values.
    func filling(from other: OutputSettings) -> (settings: OutputSettings, conflicts: [String]) {
        var merged = self
        var conflicts: [String] = []
        func take<T: Equatable>(_ key: WritableKeyPath<OutputSettings, T?>, _ field: String) {
            guard let value = other[keyPath: key] else { return }
            if let existing = self[keyPath: key] {
                if existing != value { conflicts.append(field) }
            } else {
                merged[keyPath: key] = value
            }
        }
        take(\.format, "format")
        take(\.quality, "quality")
        take(\.strip, "strip")
        take(\.progressive, "progressive")
        take(\.lossless, "lossless")
        take(\.effort, "effort")
        take(\.chromaSubsampling, "chromaSubsampling")
        take(\.autoOrient, "autoOrient")
        take(\.frame, "frame")
        take(\.pages, "pages")
        take(\.breakpoints, "breakpoints")
        take(\.densities, "densities")
        take(\.formats, "formats")
        take(\.stripProfile, "stripProfile")
        take(\.density, "density")
        take(\.pngType, "pngType")
        take(\.lossy, "lossy")
        take(\.loop, "loop")
        take(\.delay, "delay")
        take(\.tiffLZW, "tiffLZW")
        take(\.ignoreMaskChannels, "ignoreMaskChannels")
        take(\.cmyk, "colorSpace")
        take(\.keepAttribution, "keepAttribution")
        take(\.getInfo, "getInfo")
        take(\.defaultImage, "defaultImage")
        take(\.clip, "clip")
        take(\.psd, "psd")
        return (merged, conflicts)
    }
}

/// `fl_clip` (`fl_clip_evenodd` for the evenodd fill rule), with `pg_<n>` or `pg_name:<name>`
/// beside it choosing the path: everything outside a Photoshop path stored in the source (a
/// JPEG's or TIFF's 8BIM resources) becomes transparent. Without a choice, the path Photoshop
/// marks as the clipping path, else the first.
public struct ClipSetting: Sendable, Hashable {
    public var evenOdd: Bool
    /// 1-based, in the order the file stores its paths.
    public var number: Int?
    public var name: String?

    public init(evenOdd: Bool = false, number: Int? = nil, name: String? = nil) {
        self.evenOdd = evenOdd
        self.number = number
        self.name = name
    }
}

/// Cloudinary's CMYK colour spaces: `cs_cmyk` writes the output in CMYK; `cs_keep_cmyk` keeps
/// a CMYK source in CMYK (an RGB source stays sRGB). Derive works in sRGB and converts at the
/// encoder with libvips' built-in CMYK profile, which the file carries; only JPEG and TIFF hold
/// CMYK.
public enum CMYKOutput: String, Sendable, Hashable {
    case convert = "cmyk"
    case keep = "keep_cmyk"

    /// The formats a CMYK file can be written in.
    public static let formats: Set<OutputFormat> = [.jpeg, .tiff]
}

/// What of a Photoshop document an output is made from (`pg_name:`, `pg_embedded:`), read by
/// Derive's own PSD reader (`PhotoshopDocument`) before the source is decoded.
public enum PSDSelection: Sendable, Hashable {
    /// `pg_name:<layer>;<layer>`: these layers composited in document order, each at its place
    /// with its opacity, on a transparent canvas of the document's size.
    case layers([String])
    /// `pg_embedded:<n>`: the file embedded in the n-th smart object layer (from 1, bottom to top).
    case embedded(Int)
    /// `pg_embedded:name:<layer>;<layer>`: the file embedded in the first smart object layer
    /// named (or the first embedded file of that name) that the document has.
    case embeddedNamed([String])

    /// As Cloudinary writes it after `pg_`.
    public var cloudinaryText: String {
        switch self {
        case .layers(let names): "name:" + names.map(CloudinaryPrinter.percentEncode).joined(separator: ";")
        case .embedded(let n): "embedded:\(n)"
        case .embeddedNamed(let names): "embedded:name:" + names.map(CloudinaryPrinter.percentEncode).joined(separator: ";")
        }
    }

    /// `name:A;B`, `embedded:2`, `embedded:name:A;B` (names percent-decoded); nil otherwise.
    public static func parse(_ text: String) -> PSDSelection? {
        func names(_ list: Substring) -> [String]? {
            let parts = list.split(separator: ";", omittingEmptySubsequences: false).map { String($0).removingPercentEncoding ?? "" }
            return parts.isEmpty || parts.contains("") ? nil : parts
        }
        if text.hasPrefix("embedded:name:") { return names(text.dropFirst(14)).map(PSDSelection.embeddedNamed) }
        if text.hasPrefix("embedded:") {
            guard let n = Int(text.dropFirst(9)), n >= 1 else { return nil }
            return .embedded(n)
        }
        if text.hasPrefix("name:") { return names(text.dropFirst(5)).map(PSDSelection.layers) }
        return nil
    }
}
