import DeriveLanguage

/// What a worker asks before it decodes, so that the same work is never done twice: the rows
/// earlier runs recorded for a source's content. A derivative row is written in the same
/// transaction as its job's completion, after its object was stored, so a row names an object
/// that was whole when it was recorded; the worker still checks the object is there.
public protocol RecordedWork: Sendable {
    /// The asset row for the content `sha256` and its current (not superseded) derivative rows
    /// for `outputs` (by output name and identity); nil when the content was never recorded.
    func recorded(sourceSHA256 sha256: String, outputs: [OutputIdentity]) throws(DeriveError) -> RecordedAsset?
}

/// An output as the queue records it: its name in the job and its canonical identity.
public struct OutputIdentity: Sendable, Hashable {
    public var name: String
    public var identity: String

    public init(name: String, identity: String) {
        self.name = name
        self.identity = identity
    }

    /// The list as the stores' statements take it: `[{"name": …, "identity": …}]`.
    public static func json(_ outputs: [OutputIdentity]) -> String {
        JSONWriter.compact(.array(outputs.map { .object(["name": .string($0.name), "identity": .string($0.identity)]) }))
    }
}

public struct RecordedAsset: Sendable, Equatable {
    public var asset: AssetRecord
    public var derivatives: [DerivativeRecord]

    public init(asset: AssetRecord, derivatives: [DerivativeRecord]) {
        self.asset = asset
        self.derivatives = derivatives
    }

    /// The asset row and the JSON array of its derivative rows, as both stores select them.
    public init(assetRow: JSONValue, derivativeRows: JSONValue) throws(DeriveError) {
        guard case .array(let list) = derivativeRows else {
            throw DeriveError(.internalError, "the derivative rows did not come back as a list: \(derivativeRows.typeDescription)", retryable: false)
        }
        var derivatives: [DerivativeRecord] = []
        for row in list { derivatives.append(try DerivativeRecord(row: row)) }
        self.init(asset: try AssetRecord(row: assetRow), derivatives: derivatives)
    }

    /// The rows of one output (several for a breakpoint set), widest last as a run records them.
    public func derivatives(of output: OutputIdentity) -> [DerivativeRecord] {
        derivatives.filter { $0.outputName == output.name && $0.chainHash == output.identity }
            .sorted { ($0.breakpointWidth ?? 0) < ($1.breakpointWidth ?? 0) }
    }
}

extension RenderedOutput {
    /// A recorded output as the report and the new record show it; nil when the row names a
    /// format this version does not write.
    public init?(reusing row: DerivativeRecord) {
        guard let format = OutputFormat(rawValue: row.format) else { return nil }
        func milliseconds(_ stage: String) -> Double {
            if case .number(let number)? = row.timings[stage] { return number.doubleValue }
            return 0
        }
        self.init(name: row.outputName, breakpointWidth: row.breakpointWidth, identity: row.chainHash, data: [], metadata: OutputMetadata(
            format: format, width: row.width, height: row.height, bytes: row.bytes, sha256: row.sha256, frames: row.frames,
            hasAlpha: row.hasAlpha, quality: row.quality, choices: [], blurhash: row.blurhash ?? "", dominantColor: row.dominantColor ?? "",
            applyMilliseconds: milliseconds("apply"), encodeMilliseconds: milliseconds("encode")))
        reused = true
    }
}

extension SourceMetadata {
    /// A source nothing was decoded from: the header's facts, and what the decode told an
    /// earlier run (colour space, profile, EXIF, perceptual hash) from its asset row.
    public init(recorded asset: AssetRecord, inspection: SourceInspection, image: SourceImage) {
        var inspection = inspection
        inspection.colorSpace = asset.colorSpace ?? inspection.colorSpace
        inspection.iccDescription = asset.iccDescription
        inspection.exif = asset.exif
        inspection.hasLocation = asset.hasLocation
        self.init(location: image.location, sha256: asset.sha256, bytes: image.bytes.count, inspection: inspection,
                  perceptualHash: asset.perceptualHash ?? "")
    }
}

/// Reading rows back from the JSON both stores produce with the table's column names (the
/// inverse of `row`). A missing or mistyped column is an error, in either store.
extension AssetRecord {
    public init(row: JSONValue) throws(DeriveError) {
        let row = RecordRow(row, table: "assets")
        var exif: [String: String] = [:]
        if case .object(let members)? = row.optional("exif") {
            for member in members { if case .string(let text) = member.value { exif[member.key] = text } }
        }
        // Faces as `FaceFindings.json` wrote them (without the milliseconds, which are not kept);
        // NULL, or a row selected without the column, is "no job looked".
        var faces: FaceFindings?
        if let found = row.optional("faces") {
            do { faces = try FaceFindings(json: found) } catch { throw row.bad("faces", "face findings (\(error.detail))") }
        }
        self.init(sha256: try row.string("sha256"), sourceURL: try row.string("source_url"), bytes: try row.int("bytes"),
                  format: try row.string("format"), width: try row.int("width"), height: try row.int("height"), pages: try row.int("pages"),
                  hasAlpha: try row.bool("has_alpha"), orientation: try row.int("orientation"), colorSpace: try row.optionalString("colour_space"),
                  iccDescription: try row.optionalString("icc_description"), exif: exif, hasLocation: try row.bool("has_location"),
                  perceptualHash: try row.optionalString("perceptual_hash"), faces: faces,
                  tags: try Self.tags(row.optional("tags"), row: row), context: try Self.context(row.optional("context"), row: row))
    }

    /// `["sale", ...]`, NULL (or a row selected without the column) when no job named tags.
    static func tags(_ value: JSONValue?, row: RecordRow) throws(DeriveError) -> [String]? {
        guard let value else { return nil }
        guard case .array(let items) = value else { throw row.bad("tags", "a JSON array of texts") }
        var tags: [String] = []
        for item in items {
            guard case .string(let tag) = item else { throw row.bad("tags", "a JSON array of texts") }
            tags.append(tag)
        }
        return tags
    }

    /// `{"key": "value", ...}`, NULL when no job named context.
    static func context(_ value: JSONValue?, row: RecordRow) throws(DeriveError) -> [String: String]? {
        guard let value else { return nil }
        guard case .object(let members) = value else { throw row.bad("context", "a JSON object of texts") }
        var context: [String: String] = [:]
        for member in members {
            guard case .string(let text) = member.value else { throw row.bad("context", "a JSON object of texts") }
            context[member.key] = text
        }
        return context
    }
}

extension DerivativeRecord {
    public init(row: JSONValue) throws(DeriveError) {
        let row = RecordRow(row, table: "derivatives")
        self.init(outputName: try row.string("output_name"), breakpointWidth: try row.optionalInt("breakpoint_width"),
                  chain: row.optional("chain") ?? .null, chainHash: try row.string("chain_hash"),
                  presetName: try row.optionalString("preset_name"), presetVersion: try row.optionalInt("preset_version"),
                  storageKey: try row.string("storage_key"), url: try row.string("url"), format: try row.string("format"),
                  width: try row.int("width"), height: try row.int("height"), bytes: try row.int("bytes"), sha256: try row.string("sha256"),
                  quality: try row.optionalInt("quality"), frames: try row.int("frames"), hasAlpha: try row.bool("has_alpha"),
                  blurhash: try row.optionalString("blurhash"), dominantColor: try row.optionalString("dominant_color"),
                  timings: row.optional("timings") ?? .object([]))
    }
}

/// One row as a JSON object, read by column name.
struct RecordRow {
    let value: JSONValue
    let table: String

    init(_ value: JSONValue, table: String) {
        self.value = value
        self.table = table
    }

    func optional(_ column: String) -> JSONValue? {
        guard let field = value[column], field != .null else { return nil }
        return field
    }

    func bad(_ column: String, _ expected: String) -> DeriveError {
        DeriveError(.internalError, "\(table).\(column) is not \(expected): \(value[column]?.typeDescription ?? "missing")", retryable: false)
    }

    func string(_ column: String) throws(DeriveError) -> String {
        guard case .string(let text)? = value[column] else { throw bad(column, "text") }
        return text
    }

    func optionalString(_ column: String) throws(DeriveError) -> String? {
        guard let field = optional(column) else { return nil }
        guard case .string(let text) = field else { throw bad(column, "text or null") }
        return text
    }

    func int(_ column: String) throws(DeriveError) -> Int {
        guard case .number(let number)? = value[column], let int = number.intValue else { throw bad(column, "an integer") }
        return int
    }

    func optionalInt(_ column: String) throws(DeriveError) -> Int? {
        guard let field = optional(column) else { return nil }
        guard case .number(let number) = field, let int = number.intValue else { throw bad(column, "an integer or null") }
        return int
    }

    /// PostgreSQL's booleans, and SQLite's 0 and 1.
    func bool(_ column: String) throws(DeriveError) -> Bool {
        switch value[column] {
        case .bool(let flag)?: return flag
        case .number(let number)? where number.intValue == 0 || number.intValue == 1: return number.intValue == 1
        default: throw bad(column, "a boolean")
        }
    }
}
