/// An output in canonical form: presets expanded, chain normalised, every encoding default
/// filled in. `identity` is the SHA-256 of its canonical JSON without the name; it goes into
/// storage keys, so equal work maps to equal keys and any change of meaning to a new key.
public struct CanonicalOutput: Sendable, Hashable {
    public var name: String
    public var chain: [Step]
    public var encoding: EncodingSettings
    /// Presets this output was expanded from, for staleness tracking.
    public var presets: [PresetReference]
    /// The notes of the output as written (`OutputSpec.notes`); not part of the identity.
    public var notes: [String]

    public init(name: String, chain: [Step], encoding: EncodingSettings, presets: [PresetReference] = [], notes: [String] = []) {
        self.name = name
        self.chain = chain
        self.encoding = encoding
        self.presets = presets
        self.notes = notes
    }

    /// Two outputs are the same when they mean the same: notes say how a spelling was read
    /// (`c_fill,e_grayscale` is `e_grayscale`), not what the output is.
    public static func == (a: CanonicalOutput, b: CanonicalOutput) -> Bool {
        a.name == b.name && a.chain == b.chain && a.encoding == b.encoding && a.presets == b.presets
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(chain)
        hasher.combine(encoding)
        hasher.combine(presets)
    }

    /// The canonical output object (same schema as input, every default explicit).
    public var json: JSONValue {
        ChainEncoder.json(OutputSpec(name: name, chain: chain, settings: encoding.asSettings))
    }

    /// The exact text hashed for identity: versioned, name left out, keys sorted.
    public var identityText: String {
        guard case .object(let members) = json else { return "" }
        let unnamed = JSONValue.object(members.filter { $0.key != "name" })
        return JSONWriter.canonical(.object(["derive": .int(CanonicalOutput.identityVersion), "output": unnamed]))
    }

    /// Hex SHA-256 of `identityText`.
    public var identity: String { SHA256.hex(identityText) }

    /// Bumped only if the meaning of an existing canonical form changes.
    public static let identityVersion = 1
}

/// Encoding settings with defaults filled in. `quality` and `effort` stay nil only while the
/// format is `original` or `auto`; the planner fills them once the format is known.
public struct EncodingSettings: Sendable, Hashable {
    public var format: OutputFormat
    public var quality: Quality?
    public var strip: Bool
    public var progressive: Bool
    public var lossless: Bool
    public var effort: Int?
    public var chromaSubsampling: ChromaSubsampling
    public var autoOrient: Bool
    public var frame: Int?
    /// Normalised (`2;3;4` is `2-4`); a set of one page is `frame` instead.
    public var pages: PageSet?
    public var breakpoints: Breakpoints?
    public var densities: [Double]?
    /// Only when metadata is kept: stripping all of it removes the profile already.
    public var stripProfile: Bool
    /// `dn_`: dots per inch (rasterising density of vector sources, resolution of the output).
    public var density: Int?
    /// `d_`: made from this image when the source does not exist.
    public var defaultImage: String?
    /// `fl_clip`: the source clipped to a path stored in it, before the chain.
    public var clip: ClipSetting?
    /// `pg_name:` / `pg_embedded:`: the layers or embedded file of a PSD the output is made from.
    public var psd: PSDSelection?
    /// `fl_png8`/`fl_png24`/`fl_png32`: a PNG output's colour type.
    public var pngType: PNGType?
    /// `fl_lossy`.
    public var lossy: Bool
    /// `e_loop`: the animation's plays, 0 for forever; nil keeps the source's.
    public var loop: Int?
    /// `dl_`: each frame's time in milliseconds; nil keeps the source's.
    public var delay: Int?
    /// `fl_tiff8_lzw`.
    public var tiffLZW: Bool
    /// `fl_ignore_mask_channels`: a TIFF's extra channel marked as a mask, not alpha, is dropped.
    public var ignoreMaskChannels: Bool
    /// `cs_cmyk`, `cs_keep_cmyk`. In a planned output, `.convert` when the file is written in
    /// CMYK and nil otherwise (`keep` resolved on the source).
    public var cmyk: CMYKOutput?
    /// Whether the file is written in CMYK: `.convert` in a format that holds it.
    public var writesCMYK: Bool { cmyk == .convert && CMYKOutput.formats.contains(format) }
    /// `fl_keep_attribution`: with metadata stripped, the EXIF copyright and artist kept.
    public var keepAttribution: Bool
    /// `fl_getinfo`.
    public var getInfo: Bool

    public init(_ s: OutputSettings) {
        format = s.format ?? .original
        lossless = s.lossless ?? false
        quality = s.quality ?? (format.isConcrete && !lossless ? .value(format.defaultQuality) : nil)
        strip = s.strip ?? true
        progressive = s.progressive ?? false
        effort = s.effort ?? (format.isConcrete ? format.canonicalEffort : nil)
        chromaSubsampling = s.chromaSubsampling ?? .auto
        autoOrient = s.autoOrient ?? true
        frame = s.frame ?? s.pages?.singlePage
        pages = s.pages?.singlePage == nil ? s.pages?.normalised : nil
        breakpoints = s.breakpoints
        densities = s.densities
        stripProfile = !strip && (s.stripProfile ?? false)
        density = s.density
        defaultImage = s.defaultImage
        clip = s.clip
        psd = s.psd
        pngType = s.pngType
        lossy = s.lossy ?? false
        loop = s.loop
        delay = s.delay
        tiffLZW = s.tiffLZW ?? false
        ignoreMaskChannels = s.ignoreMaskChannels ?? false
        cmyk = s.cmyk
        keepAttribution = strip && (s.keepAttribution ?? false)
        getInfo = s.getInfo ?? false
    }

    /// The same settings resolved for a concrete format.
    public func resolved(to concrete: OutputFormat) -> EncodingSettings {
        var s = self
        s.format = concrete
        if s.quality == nil && !lossless { s.quality = .value(concrete.defaultQuality) }
        if s.effort == nil { s.effort = concrete.canonicalEffort }
        return s
    }

    var asSettings: OutputSettings {
        var s = OutputSettings(format: format, quality: quality, strip: strip, progressive: progressive, lossless: lossless,
                               effort: effort, chromaSubsampling: chromaSubsampling, autoOrient: autoOrient, frame: frame,
                               breakpoints: breakpoints)
        s.densities = densities
        s.pages = pages
        // Written only when set, so outputs without it keep their identity.
        s.stripProfile = stripProfile ? true : nil
        s.density = density
        s.defaultImage = defaultImage
        s.clip = clip
        s.psd = psd
        // Written only when set, so outputs without them keep their identity.
        s.pngType = pngType
        s.lossy = lossy ? true : nil
        s.loop = loop
        s.delay = delay
        s.tiffLZW = tiffLZW ? true : nil
        s.ignoreMaskChannels = ignoreMaskChannels ? true : nil
        s.cmyk = cmyk
        s.keepAttribution = keepAttribution ? true : nil
        s.getInfo = getInfo ? true : nil
        return s
    }
}

/// A preset name and the version an output was expanded from.
public struct PresetReference: Sendable, Hashable, CustomStringConvertible {
    public var name: String
    public var version: Int

    public init(name: String, version: Int) {
        self.name = name
        self.version = version
    }

    public var description: String { "\(name)@\(version)" }
}
