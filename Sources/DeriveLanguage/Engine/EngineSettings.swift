/// How the image engine runs: libvips threads and cache, which risky loaders are allowed, and
/// the limits every source is checked against before decoding.
public struct EngineSettings: Sendable, Hashable {
    /// Threads libvips uses per image (0: one per core).
    public var concurrency: Int
    /// libvips' operation cache. Jobs rarely repeat an operation, so it is off by default and
    /// memory stays flat between jobs.
    public var cacheMaxOperations: Int
    public var cacheMaxMemory: Int
    /// Loaders libvips marks untrusted that are allowed anyway: `svg` (SVG and SVGZ), `pdf`,
    /// `jxl`, `jp2k`, `ppm` (Netpbm), `rad` (Radiance HDR), `openexr`, `magick` (BMP, ICO, TGA,
    /// PSD through ImageMagick).
    public var allowedLoaders: Set<UntrustedLoader>
    public var sourceLimits: SourceLimits
    /// Whether and at what size faces are looked for.
    public var faces: FaceDetectionSettings
    /// Trial encodes (each decoded and scored) one output's `q_auto`/`f_auto` search may
    /// spend, all formats together; the encode of the whole output comes on top.
    public var qualityMaxEncodes: Int
    /// The formats `f_auto` chooses among (the smallest at the quality target wins).
    public var autoFormats: [OutputFormat]
    /// The deployment's encoder effort by format (Derive's 0–9 scale, `DERIVE_<FORMAT>_EFFORT`)
    /// for outputs that give none; formats not here take `defaultEfforts`.
    public var efforts: [OutputFormat: Int] = [:]
    /// glibc malloc arenas for the process, set when libvips starts (an operator's
    /// MALLOC_ARENA_MAX wins). glibc's own limit, eight per core, lets a long-running process
    /// grow by tens of megabytes for nothing; two keep `derive run` flat, and `derive work`
    /// gives each slot one, so slots do not queue for the same arena's lock.
    public var mallocArenas: Int = 2

    public static let defaultQualityMaxEncodes = 16
    /// The default efforts, chosen on the encoders' frontier (issue 40, Benchmarks/RESULTS.md):
    /// WebP 3 is libwebp's method 2 (method 3, the former default, took twice its time for
    /// under 1% fewer bytes); JPEG XL 5 took fewer bytes than 7, the former default, in half
    /// the time. AVIF keeps 4 (`canonicalEffort`): at 0, 38x faster, `f_auto,q_auto`'s bytes
    /// rose from 0.56x to 0.71x of `q_80` JPEG's, and `f_auto` at half the bytes is a measured
    /// promise that is not traded for speed by default (`DERIVE_AVIF_EFFORT=0` makes that
    /// trade for a deployment). Formats not listed keep `canonicalEffort`.
    public static let defaultEfforts: [OutputFormat: Int] = [.webp: 3, .jxl: 5]
    /// The formats whose effort a deployment may set (`DERIVE_<FORMAT>_EFFORT`): those whose
    /// encoder reads it.
    public static let effortFormats: [OutputFormat] = [.avif, .webp, .jxl, .png, .gif]

    /// The effort an encode of `format` runs at, and where it came from: the output's own
    /// `effort`, else the deployment's. An output's effort equal to the format's
    /// `canonicalEffort` is the deployment's: the canonical form has always written that value
    /// for outputs that give none, so the two share one identity and one meaning.
    public func effort(for encoding: EncodingSettings, format: OutputFormat) -> (effort: Int, source: EffortSource) {
        if let given = encoding.effort, given != format.canonicalEffort, encoding.format == format {
            return (given, .output)
        }
        if let deployed = efforts[format] { return (deployed, .deployment) }
        return (Self.defaultEfforts[format] ?? format.canonicalEffort, .frontier)
    }

    /// Where an encode's effort came from.
    public enum EffortSource: String, Sendable {
        /// The output's JSON `effort`.
        case output
        /// `DERIVE_<FORMAT>_EFFORT`.
        case deployment
        /// Derive's default for the format.
        case frontier
    }
    public static let defaultAutoFormats: [OutputFormat] = [.avif, .webp, .jpeg]

    public init(concurrency: Int = 0, cacheMaxOperations: Int = 0, cacheMaxMemory: Int = 0,
                allowedLoaders: Set<UntrustedLoader> = [], sourceLimits: SourceLimits = .default,
                faces: FaceDetectionSettings = FaceDetectionSettings(),
                qualityMaxEncodes: Int = defaultQualityMaxEncodes, autoFormats: [OutputFormat] = defaultAutoFormats) {
        self.qualityMaxEncodes = qualityMaxEncodes
        self.autoFormats = autoFormats
        self.concurrency = concurrency
        self.cacheMaxOperations = cacheMaxOperations
        self.cacheMaxMemory = cacheMaxMemory
        self.allowedLoaders = allowedLoaders
        self.sourceLimits = sourceLimits
        self.faces = faces
    }
}

/// libvips loaders that parse complex formats with large attack surfaces; blocked unless the
/// operator allows them.
public enum UntrustedLoader: String, Sendable, Hashable, CaseIterable {
    case svg, pdf, jxl, jp2k, ppm, rad, openexr, magick

    /// The source formats each one reads.
    public var formats: [ImageFormat] {
        switch self {
        case .svg: [.svg, .svgz]
        case .pdf: [.pdf]
        case .jxl: [.jxl]
        case .jp2k: [.jp2]
        case .ppm: [.pnm]
        case .rad: [.hdr]
        case .openexr: [.exr]
        case .magick: [.bmp, .ico, .tga, .psd]
        }
    }

    public static func required(for format: ImageFormat) -> UntrustedLoader? {
        allCases.first { $0.formats.contains(format) }
    }
}
