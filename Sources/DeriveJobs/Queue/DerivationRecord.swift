import DeriveLanguage

/// What a finished job writes to the database beside archiving itself, in the same
/// transaction: its source (one asset row per content) and one derivative row per output.
public struct DerivationRecord: Sendable, Equatable {
    public var asset: AssetRecord
    public var derivatives: [DerivativeRecord]
    /// The source URL as the job named it, and the origin's validators, for revalidation.
    public var source: SourceRecord?

    public init(asset: AssetRecord, derivatives: [DerivativeRecord], source: SourceRecord? = nil) {
        self.asset = asset
        self.derivatives = derivatives
        self.source = source
    }

    /// The presets whose older outputs for this asset the new ones replace.
    public var presetVersions: [String: Int] {
        var versions: [String: Int] = [:]
        for derivative in derivatives {
            if let name = derivative.presetName, let version = derivative.presetVersion { versions[name] = max(versions[name] ?? 0, version) }
        }
        return versions
    }

    /// The record of a job whose outputs went to a store: `stored[i]` is where
    /// `report.result.outputs[i]` was written.
    public init(report: JobReport, resolved: ResolvedJob, stored: [StoredObject], sourceURL: String? = nil) {
        let source = report.result.source
        self.source = sourceURL.map { url in
            SourceRecord(url: url, etag: report.fetched?.etag, lastModified: report.fetched?.lastModified)
        }
        let facts = source.inspection.facts
        asset = AssetRecord(sha256: source.sha256, sourceURL: Redacted.url(source.location), bytes: source.bytes, format: facts.format.rawValue,
                            width: facts.orientedSize.width, height: facts.orientedSize.height, pages: facts.pages, hasAlpha: facts.hasAlpha,
                            orientation: facts.orientation, colorSpace: source.inspection.colorSpace,
                            iccDescription: source.inspection.iccDescription, exif: source.inspection.exif,
                            hasLocation: source.inspection.hasLocation, perceptualHash: source.perceptualHash, faces: source.faces,
                            tags: resolved.asset.tags.isEmpty ? nil : resolved.asset.tags,
                            context: resolved.asset.context.isEmpty ? nil : resolved.asset.context)
        derivatives = zip(report.result.outputs, stored).map { output, object in
            // The output's own canonical form: a format set has one per format under one name
            // (its identity, or for a chain reading the asset's values, its format, tells it).
            let named = resolved.outputs.filter { $0.name == output.name }
            let canonical = named.first { $0.identity == output.identity } ?? named.first { $0.encoding.format == output.metadata.format } ?? named.first
            let preset = canonical?.presets.first ?? resolved.preset
            let m = output.metadata
            return DerivativeRecord(
                outputName: output.name, breakpointWidth: output.breakpointWidth, chain: canonical?.json ?? .null, chainHash: output.identity,
                presetName: preset?.name, presetVersion: preset?.version, storageKey: object.key.description, url: object.url,
                format: m.format.rawValue, width: m.width, height: m.height, bytes: m.bytes, sha256: m.sha256, quality: m.quality,
                frames: m.frames, hasAlpha: m.hasAlpha, blurhash: m.blurhash, dominantColor: m.dominantColor,
                timings: .object(["apply": .decimal(m.applyMilliseconds), "encode": .decimal(m.encodeMilliseconds)]))
        }
    }
}

/// A source URL's row in `derive.sources`.
public struct SourceRecord: Sendable, Equatable {
    public var url: String
    public var etag: String?
    public var lastModified: String?

    public init(url: String, etag: String?, lastModified: String?) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
    }
}

/// A source's row in `derive.assets`, keyed by its content hash.
public struct AssetRecord: Sendable, Equatable {
    public var sha256: String
    public var sourceURL: String
    public var bytes: Int
    public var format: String
    /// Upright (after EXIF orientation).
    public var width: Int
    public var height: Int
    public var pages: Int
    public var hasAlpha: Bool
    public var orientation: Int
    public var colorSpace: String?
    public var iccDescription: String?
    public var exif: [String: String]
    public var hasLocation: Bool
    public var perceptualHash: String?
    /// Nil when the job did not look for faces (the row keeps what an earlier job found). Read
    /// back from the row, `milliseconds` is 0: the time detection took is not kept.
    public var faces: FaceFindings?
    /// The tags and context a job gave the asset (Cloudinary's), nil when the job named none
    /// (the row keeps what an earlier job gave).
    public var tags: [String]?
    public var context: [String: String]?

    public init(sha256: String, sourceURL: String, bytes: Int, format: String, width: Int, height: Int, pages: Int, hasAlpha: Bool,
                orientation: Int, colorSpace: String?, iccDescription: String?, exif: [String: String], hasLocation: Bool,
                perceptualHash: String?, faces: FaceFindings? = nil, tags: [String]? = nil, context: [String: String]? = nil) {
        self.tags = tags
        self.context = context
        self.sha256 = sha256
        self.sourceURL = sourceURL
        self.bytes = bytes
        self.format = format
        self.width = width
        self.height = height
        self.pages = pages
        self.hasAlpha = hasAlpha
        self.orientation = orientation
        self.colorSpace = colorSpace
        self.iccDescription = iccDescription
        self.exif = exif
        self.hasLocation = hasLocation
        self.perceptualHash = perceptualHash
        self.faces = faces
    }

    /// The row as JSON with the table's column names.
    public var row: JSONValue {
        .object([
            "sha256": .string(sha256), "source_url": .string(sourceURL), "bytes": .int(bytes), "format": .string(format),
            "width": .int(width), "height": .int(height), "pages": .int(pages), "has_alpha": .bool(hasAlpha),
            "orientation": .int(orientation), "colour_space": colorSpace.map(JSONValue.string) ?? .null,
            "icc_description": iccDescription.map(JSONValue.string) ?? .null,
            "exif": .object(exif.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: .string($0.value)) }),
            "has_location": .bool(hasLocation), "perceptual_hash": perceptualHash.map(JSONValue.string) ?? .null,
            "faces": faces?.json ?? .null,
            "tags": tags.map { .array($0.map(JSONValue.string)) } ?? .null,
            "context": context.map { AssetFacts(context: $0).contextJSON } ?? .null,
        ])
    }

    /// The tags and context as the planner's conditions read them.
    public var facts: AssetFacts { AssetFacts(tags: tags ?? [], context: context ?? [:]) }
}

/// An output's row in `derive.derivatives`.
public struct DerivativeRecord: Sendable, Equatable {
    public var outputName: String
    public var breakpointWidth: Int?
    /// The canonical output (chain and encoding) and its identity hash.
    public var chain: JSONValue
    public var chainHash: String
    public var presetName: String?
    public var presetVersion: Int?
    public var storageKey: String
    public var url: String
    public var format: String
    public var width: Int
    public var height: Int
    public var bytes: Int
    public var sha256: String
    public var quality: Int?
    public var frames: Int
    public var hasAlpha: Bool
    public var blurhash: String?
    public var dominantColor: String?
    /// Milliseconds per stage: `apply`, `encode`.
    public var timings: JSONValue

    public init(outputName: String, breakpointWidth: Int?, chain: JSONValue, chainHash: String, presetName: String?, presetVersion: Int?,
                storageKey: String, url: String, format: String, width: Int, height: Int, bytes: Int, sha256: String, quality: Int?,
                frames: Int, hasAlpha: Bool, blurhash: String?, dominantColor: String?, timings: JSONValue) {
        self.outputName = outputName
        self.breakpointWidth = breakpointWidth
        self.chain = chain
        self.chainHash = chainHash
        self.presetName = presetName
        self.presetVersion = presetVersion
        self.storageKey = storageKey
        self.url = url
        self.format = format
        self.width = width
        self.height = height
        self.bytes = bytes
        self.sha256 = sha256
        self.quality = quality
        self.frames = frames
        self.hasAlpha = hasAlpha
        self.blurhash = blurhash
        self.dominantColor = dominantColor
        self.timings = timings
    }

    /// The row as JSON with the table's column names (`asset_id` and `job_id` are the store's).
    public var row: JSONValue {
        .object([
            "output_name": .string(outputName), "breakpoint_width": breakpointWidth.map(JSONValue.int) ?? .null, "chain": chain,
            "chain_hash": .string(chainHash), "preset_name": presetName.map(JSONValue.string) ?? .null,
            "preset_version": presetVersion.map(JSONValue.int) ?? .null, "storage_key": .string(storageKey), "url": .string(url),
            "format": .string(format), "width": .int(width), "height": .int(height), "bytes": .int(bytes), "sha256": .string(sha256),
            "quality": quality.map(JSONValue.int) ?? .null, "frames": .int(frames), "has_alpha": .bool(hasAlpha),
            "blurhash": blurhash.map(JSONValue.string) ?? .null, "dominant_color": dominantColor.map(JSONValue.string) ?? .null,
            "timings": timings,
        ])
    }
}
