/// A source image's bytes and where they came from.
public struct SourceImage: Sendable {
    public var bytes: [UInt8]
    /// URL or path, for messages and the report.
    public var location: String
    /// The bytes' SHA-256 (hex), when whoever read them hashed them already (the pipeline
    /// does, to look for recorded work before decoding); the engine hashes them otherwise.
    public var sha256: String?

    public init(bytes: [UInt8], location: String, sha256: String? = nil) {
        self.bytes = bytes
        self.location = location
        self.sha256 = sha256
    }
}

/// What an engine learns from a source's header: the facts the planner needs and the metadata
/// an asset records.
public struct SourceInspection: Sendable, Hashable {
    public var facts: SourceFacts
    /// The colour space libvips reports (`srgb`, `cmyk`, `b-w`, `rgb16`...).
    public var colorSpace: String
    /// The embedded ICC profile's description, if there is one.
    public var iccDescription: String?
    /// Selected EXIF fields: `takenAt`, `make`, `model`, `lens`, `software`.
    public var exif: [String: String]
    /// Whether the source carries GPS coordinates (never copied into outputs when stripping).
    public var hasLocation: Bool

    public init(facts: SourceFacts, colorSpace: String, iccDescription: String? = nil, exif: [String: String] = [:],
                hasLocation: Bool = false) {
        self.facts = facts
        self.colorSpace = colorSpace
        self.iccDescription = iccDescription
        self.exif = exif
        self.hasLocation = hasLocation
    }
}

/// Where overlay images come from (`l_logo`, `l_fetch:...`): local files for `derive run`,
/// the fetcher in a worker.
public protocol OverlayLoader: Sendable {
    func load(_ reference: String) throws(DeriveError) -> SourceImage
}

/// Refuses every overlay: for callers that know their chains have none.
public struct NoOverlays: OverlayLoader {
    public init() {}
    public func load(_ reference: String) throws(DeriveError) -> SourceImage {
        throw DeriveError(.sourceRefused, "overlay \(Quoted(reference)) cannot be loaded here: no overlay location is configured")
    }
}

/// The seam between the worker and the pixels. An engine decodes a source once at the plan's
/// decode size and derives every output from that decode.
public protocol ImageEngine: Sendable {
    /// Reads the header (no pixels) and checks it against the limits. The facts are complete;
    /// the colour space, profile and EXIF may be left for `render` to fill in from the decode.
    func inspect(_ source: SourceImage) throws(DeriveError) -> SourceInspection

    /// Decodes, applies and encodes every planned output, saying when it moves from decoding
    /// (and finding faces) to the outputs, so that a worker can say which it is doing.
    func render(_ plan: Plan, source: SourceImage, inspection: SourceInspection,
                overlays: any OverlayLoader, phase: (RenderPhase) -> Void) throws(DeriveError) -> RenderResult

    /// `pg_name:` / `pg_embedded:`: the part of a Photoshop document the job is made from, as
    /// a source of its own, read within the engine's configured limits (`PSDSelection.source`
    /// with them; no default, so that no engine reads a document within other limits).
    func selecting(_ selection: PSDSelection, from source: SourceImage) throws(DeriveError) -> SourceImage
}

/// Where a render is: decoding the source (and looking at it), or applying and encoding the outputs.
public enum RenderPhase: Sendable {
    case decoding, outputs
}

extension ImageEngine {
    /// A render nobody watches.
    public func render(_ plan: Plan, source: SourceImage, inspection: SourceInspection,
                       overlays: any OverlayLoader) throws(DeriveError) -> RenderResult {
        try render(plan, source: source, inspection: inspection, overlays: overlays, phase: { _ in })
    }
}

/// Milliseconds spent in each stage.
public struct StageTimings: Sendable, Hashable {
    public var fetch: Double = 0
    public var header: Double = 0
    public var plan: Double = 0
    public var decode: Double = 0
    public var metadata: Double = 0
    /// Finding faces (0 when no output needed them).
    public var faces: Double = 0
    public var store: Double = 0

    public init() {}
}

/// Everything one render produced.
public struct RenderResult: Sendable {
    public var source: SourceMetadata
    public var outputs: [RenderedOutput]
    public var timings: StageTimings

    public init(source: SourceMetadata, outputs: [RenderedOutput], timings: StageTimings) {
        self.source = source
        self.outputs = outputs
        self.timings = timings
    }
}

/// What an asset records about its source.
public struct SourceMetadata: Sendable, Hashable {
    public var location: String
    public var sha256: String
    public var bytes: Int
    public var inspection: SourceInspection
    /// 64-bit difference hash of the upright image, as 16 hex digits: near-identical images
    /// differ in few bits.
    public var perceptualHash: String
    /// The faces found, in upright source pixels; nil when no output needed them (or detection
    /// is off).
    public var faces: FaceFindings?

    public init(location: String, sha256: String, bytes: Int, inspection: SourceInspection, perceptualHash: String) {
        self.location = location
        self.sha256 = sha256
        self.bytes = bytes
        self.inspection = inspection
        self.perceptualHash = perceptualHash
    }
}

/// One encoded output and what a derivative records about it.
public struct RenderedOutput: Sendable {
    public var name: String
    public var breakpointWidth: Int?
    public var identity: String
    public var data: [UInt8]
    public var metadata: OutputMetadata
    /// Recorded by an earlier run and found in the store: not derived, not written (`data` is
    /// empty).
    public var reused = false

    public init(name: String, breakpointWidth: Int?, identity: String, data: [UInt8], metadata: OutputMetadata) {
        self.name = name
        self.breakpointWidth = breakpointWidth
        self.identity = identity
        self.data = data
        self.metadata = metadata
    }
}

public struct OutputMetadata: Sendable, Hashable {
    public var format: OutputFormat
    public var width: Int
    public var height: Int
    public var bytes: Int
    public var sha256: String
    public var frames: Int
    public var hasAlpha: Bool
    /// The quality the encoder used (nil for lossless encodes).
    public var quality: Int?
    /// How `auto` format or quality was resolved, when it was.
    public var choices: [String]
    public var blurhash: String
    /// `#rrggbb`.
    public var dominantColor: String
    /// Milliseconds applying operations and encoding.
    public var applyMilliseconds: Double
    public var encodeMilliseconds: Double
    /// The content-aware crops the output's chain took, in order: which window and why.
    public var crops: [CropDecision] = []
    /// The privacy effects the output's chain applied, in order: how many faces each covered.
    public var faceCovers: [FaceCover] = []

    public init(format: OutputFormat, width: Int, height: Int, bytes: Int, sha256: String, frames: Int, hasAlpha: Bool,
                quality: Int?, choices: [String], blurhash: String, dominantColor: String, applyMilliseconds: Double,
                encodeMilliseconds: Double) {
        self.format = format
        self.width = width
        self.height = height
        self.bytes = bytes
        self.sha256 = sha256
        self.frames = frames
        self.hasAlpha = hasAlpha
        self.quality = quality
        self.choices = choices
        self.blurhash = blurhash
        self.dominantColor = dominantColor
        self.applyMilliseconds = applyMilliseconds
        self.encodeMilliseconds = encodeMilliseconds
    }
}

extension OutputMetadata {
    /// Records what the chain's content-aware steps did: the crops and face covers, and a line in
    /// `choices` for each privacy effect and for each crop that cut the largest face.
    public mutating func noting(crops: [CropDecision], covers: [FaceCover]) {
        self.crops = crops
        self.faceCovers = covers
        choices += covers.map(\.sentence) + crops.compactMap(\.sentence)
    }
}
