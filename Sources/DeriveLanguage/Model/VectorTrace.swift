/// e_vectorize's tracing settings beyond the number of colours: Cloudinary's `detail`,
/// `despeckle`, `paths` and `corners` (`e_vectorize:colors:8:detail:0.5:despeckle:4`). Each is nil
/// when not given or equal to Cloudinary's default, so a chain that writes a default has the
/// identity of one that leaves it out. They shape the paths of an `f_svg` output; a raster output
/// of e_vectorize has no paths, and the plan's notes say they are not used there.
public struct VectorTrace: Sendable, Hashable {
    /// How finely the image is traced: the larger side of the bitmap potrace reads, in pixels
    /// (0–1000) or as a fraction of the image's larger side (0.0–1.0). Cloudinary's default 300.
    public var detail: Length?
    /// Speckles up to this size are dropped (potrace's turdsize, an area in traced pixels): in
    /// pixels (0–100) or as a fraction of the traced image's larger side (0.0–1.0), the side of a
    /// square speckle. Cloudinary's default 2, which is potrace's own.
    public var despeckle: Length?
    /// Bézier curve optimisation, 0–100: 100 the least (the largest file), Cloudinary's default.
    public var paths: Int?
    /// Corner threshold, 0–100: 100 polygon corners, 0 completely smooth. Cloudinary's default 25.
    public var corners: Int?

    public init(detail: Length? = nil, despeckle: Length? = nil, paths: Int? = nil, corners: Int? = nil) {
        self.detail = detail
        self.despeckle = despeckle
        self.paths = paths
        self.corners = corners
        self = normalized
    }

    /// Cloudinary's defaults (SDK reference, Vectorize: detail 300, despeckle 2, paths 100, corners 25).
    public static let defaultDetail = 300, defaultDespeckle = 2, defaultPaths = 100, defaultCorners = 25
    /// Cloudinary scales images down to 1000 pixels on the larger side before tracing.
    public static let maxDetail = 1000
    /// The smallest bitmap Derive traces (a detail of 0 would trace nothing).
    public static let minDetail = 8

    public var isDefault: Bool { self == VectorTrace() }

    /// The same settings with every default left out.
    var normalized: VectorTrace {
        var t = self
        if t.detail == .pixels(Self.defaultDetail) { t.detail = nil }
        if t.despeckle == .pixels(Self.defaultDespeckle) { t.despeckle = nil }
        if t.paths == Self.defaultPaths { t.paths = nil }
        if t.corners == Self.defaultCorners { t.corners = nil }
        return t
    }

    /// Values outside Cloudinary's ranges, as field issues.
    func issues() -> [FieldIssue] {
        var issues: [FieldIssue] = []
        func size(_ value: Length?, field: String, pixels: ClosedRange<Int>) {
            switch value {
            case .pixels(let n)?: issues += StepRules.check(n, in: pixels, field: field)
            case .fraction(let f)? where !(0...1).contains(f):
                issues.append(FieldIssue(field: field, reason: "a fraction must be between 0.0 and 1.0 (or give whole pixels, \(pixels.lowerBound) to \(pixels.upperBound)), got \(Length.fraction(f).cloudinaryText)", bound: .cloudinary))
            case .expression?:
                issues.append(FieldIssue(field: field, reason: "takes whole pixels or a fraction (0.0 to 1.0), not an expression"))
            default: break
            }
        }
        size(detail, field: "detail", pixels: 0...Self.maxDetail)
        size(despeckle, field: "despeckle", pixels: 0...100)
        if let paths { issues += StepRules.check(paths, in: 0...100, field: "paths") }
        if let corners { issues += StepRules.check(corners, in: 0...100, field: "corners") }
        return issues
    }

    /// The settings in Cloudinary's named form (`:detail:0.5:despeckle:4`), defaults left out.
    var cloudinaryArguments: String {
        var text = ""
        if let detail { text += ":detail:" + detail.cloudinaryText }
        if let despeckle { text += ":despeckle:" + despeckle.cloudinaryText }
        if let paths { text += ":paths:\(paths)" }
        if let corners { text += ":corners:\(corners)" }
        return text
    }

    /// What potrace is given for an image of `size` (the image e_vectorize receives).
    public func parameters(for size: Size) -> TraceParameters {
        let side = max(size.width, size.height)
        var traced = side
        switch detail ?? .pixels(Self.defaultDetail) {
        case .pixels(let n): traced = n
        case .fraction(let f): traced = Int((f * Double(side)).rounded())
        case .expression: break
        }
        // Never larger than the image (tracing an upscale adds nothing), never above
        // Cloudinary's 1000, never below a bitmap worth tracing.
        traced = min(side, max(Self.minDetail, min(Self.maxDetail, traced)))
        let k = Double(traced) / Double(side)
        let tracedSize = Size(max(1, Int((Double(size.width) * k).rounded())), max(1, Int((Double(size.height) * k).rounded())))
        var turdsize = Self.defaultDespeckle
        switch despeckle {
        case .pixels(let n)?: turdsize = n
        case .fraction(let f)?:
            let edge = f * Double(max(tracedSize.width, tracedSize.height))
            turdsize = Int((edge * edge).rounded())
        default: break
        }
        // potrace: alphamax 0 makes every vertex a corner, 4/3 none; Cloudinary's default 25
        // gives 1.0, potrace's own default. opttolerance 0.2 (potrace's default) at paths 100,
        // rising to 1.0 at 0 (more curves joined, a smaller file).
        let corners = Double(self.corners ?? Self.defaultCorners)
        let paths = Double(self.paths ?? Self.defaultPaths)
        return TraceParameters(size: tracedSize, turdsize: turdsize, alphamax: 4.0 / 3.0 * (100 - corners) / 100,
                               opttolerance: 0.2 + 0.8 * (100 - paths) / 100)
    }
}

/// potrace's settings for one e_vectorize, and the size of the bitmap it traces.
public struct TraceParameters: Sendable, Hashable {
    /// The bitmap's size: the image scaled so that its larger side is the detail.
    public var size: Size
    /// Paths enclosing at most this many pixels are dropped.
    public var turdsize: Int
    /// Corner threshold (0 all corners, 4/3 none).
    public var alphamax: Double
    /// Curve optimisation tolerance.
    public var opttolerance: Double
}

extension Length {
    var isPixelsOrFraction: Bool {
        if case .expression = self { return false }
        return true
    }
}
