/// What a source's header says, before any pixel is decoded.
public struct SourceFacts: Sendable, Hashable {
    public var format: ImageFormat
    /// Dimensions as stored in the file (before EXIF orientation); per frame for animations.
    public var width: Int
    public var height: Int
    /// EXIF orientation, 1–8 (1 when absent).
    public var orientation: Int
    /// Pages of a document or frames of an animation (1 for a still image).
    public var pages: Int
    public var hasAlpha: Bool
    /// A TIFF whose extra channel its ExtraSamples tag leaves unspecified: a mask channel that
    /// libvips reads as alpha, which `fl_ignore_mask_channels` drops.
    public var hasMaskChannel = false
    /// The pixels are stored in CMYK (a JPEG with four components, a separated TIFF), which
    /// `cs_keep_cmyk` keeps.
    public var isCMYK = false

    public init(format: ImageFormat, width: Int, height: Int, orientation: Int = 1, pages: Int = 1, hasAlpha: Bool = false) {
        self.format = format
        self.width = width
        self.height = height
        self.orientation = (1...8).contains(orientation) ? orientation : 1
        self.pages = max(1, pages)
        self.hasAlpha = hasAlpha
    }

    /// Orientations 5–8 turn the image a quarter, so width and height trade places.
    public var swapsAxes: Bool { orientation >= 5 }
    public var storedSize: Size { Size(width, height) }
    public var orientedSize: Size { swapsAxes ? storedSize.swapped : storedSize }
    /// GIF and WebP with several frames are animations; other multi-page files are documents.
    public var isAnimated: Bool { format.canAnimate && pages > 1 }
}

/// One concrete operation of a planned output, in the pixel coordinates of the image it
/// receives (the first receives the decoded image). The engine executes these in order and
/// does no geometry of its own, except where content decides (`smartCrop`, `trim`,
/// `deferred`, `overlay`), for which it calls back into DeriveLanguage.
public enum ImageOperation: Sendable, Hashable {
    /// Picks one page or frame (1-based) when the decode kept several.
    case selectPage(Int)
    /// Takes these pages or frames (1-based), in order, as the frames of an animation (`pg_2-4`);
    /// always first, and the operations after it run on each frame.
    case selectPages([Int])
    /// Undoes the EXIF orientation the decoder applied (`a_ignore`).
    case unorient(orientation: Int)
    /// Drops a TIFF's mask channel, which the decoder read as alpha (`fl_ignore_mask_channels`).
    case dropMaskChannel
    /// Resamples to exactly this size.
    case resize(Size)
    case crop(Rect)
    /// Cuts a window of this size where the content is most interesting, or where the faces
    /// are.
    case smartCrop(Size, SmartCrop)
    /// `c_thumb`/`c_crop` with a face gravity: a region around the faces, scaled to the
    /// requested size (`FaceGeometry.region`); without faces, the step's fallback gravity.
    case faceCrop(Resize)
    /// `c_fill_pad`/`c_auto_pad`: fills this size, or pads with `background` where filling
    /// would cut into the faces (`FillPad.operations`, decided by the engine).
    case fillPad(Size, background: Color)
    /// Places the image at `at` on a canvas of `canvas` filled from the image (`b_blurred`,
    /// `b_auto`), which the engine computes.
    case padFill(at: Rect, canvas: Size, fill: PadFill)
    /// Places the image at `at` on a canvas of `canvas` filled with `background`.
    case embed(at: Rect, canvas: Size, background: Color)
    case flip(horizontal: Bool)
    /// Clockwise by any angle onto a canvas of exactly `canvas`; right angles need no background.
    case rotate(degrees: Double, canvas: Size, background: Color?)
    case round(RoundCorners.Radius, background: Color)
    case effect(Effect)
    case trim(Trim)
    /// A 3D LUT (`l_lut:`), loaded as overlays are and applied to every pixel.
    case lut(String)
    /// Composites transparency onto a colour.
    case flatten(Color)
    case border(Border)
    case opacity(Int)
    /// A second image or a text, planned at run time against its own header, then placed.
    case overlay(Overlay)
    /// `$img_current`: the image as it is here, kept under the variable's name for the layers
    /// after it that draw it (`Overlay.Source.snapshot`); released after the last of them.
    case snapshot(String)
    /// Steps after a content-dependent size change (trim), planned at run time with
    /// `Planner.operations(for:input:)` once the size is known.
    case deferred([Step])

    /// Operations that commute with scaling: they can run on a smaller decode with their
    /// coordinates scaled, so they do not force a full-size decode.
    var commutesWithScaling: Bool {
        switch self {
        case .selectPage, .selectPages, .unorient, .crop, .smartCrop, .flip, .dropMaskChannel: true
        case .rotate(let degrees, _, _): ResizeGeometry.isRightAngle(degrees)
        case .effect(let e): e.isPointwise
        case .lut: true
        default: false
        }
    }

    /// Whether the engine must find faces before it can run this operation.
    public var needsFaces: Bool {
        switch self {
        case .smartCrop(_, let gravity): gravity.needsFaces
        case .faceCrop, .fillPad: true
        case .effect(let e): e.needsFaces
        case .overlay(let o): Step.overlay(o).needsFaces
        case .deferred(let steps): steps.contains { $0.needsFaces }
        default: false
        }
    }
}

/// Which pages or frames the decoder reads.
public enum PageSelection: Sendable, Hashable {
    /// Every frame (an animation some output keeps, or outputs wanting different pages).
    case all
    /// One page, 1-based.
    case page(Int)
}

/// How to decode the source once for the whole job.
public struct DecodePlan: Sendable, Hashable {
    /// Exact decoded size, after EXIF orientation (per frame when several are decoded).
    public var size: Size
    /// `size` relative to the oriented source; above 1 only for vector and page formats.
    public var scale: Double
    public var pages: PageSelection
    /// Only this part of the decoded image (in its upright pixels, at `size`) is decoded, when
    /// every output starts by cutting inside it (a crop around faces decided on a first, small
    /// decode: `Planner.refined(_:faces:)`); nil: all of it.
    public var region: Rect?

    public init(size: Size, scale: Double, pages: PageSelection, region: Rect? = nil) {
        self.size = size
        self.scale = scale
        self.pages = pages
        self.region = region
    }

    /// The size of the image the decoder hands over: the region's, or the whole decode's.
    public var decodedSize: Size { region?.size ?? size }
}

/// A planned output: what to do, what it ends up as, how to encode it.
public struct PlannedOutput: Sendable, Hashable {
    public var name: String
    /// The output's canonical identity (shared by all its breakpoint widths).
    public var identity: String
    /// Set on each width of a step-spaced breakpoint set.
    public var breakpointWidth: Int?
    /// Final size; nil when it depends on the content (after `trim`).
    public var size: Size?
    public var operations: [ImageOperation]
    /// Format resolved from `original`; `auto` stays for the engine to choose.
    public var encoding: EncodingSettings
    public var keepsAnimation: Bool
    /// For byte-spaced breakpoints: the engine encodes widths in this range to find them.
    public var breakpointSearch: BreakpointSearch?
    /// The canonical chain, for reports and storage.
    public var canonical: CanonicalOutput
    /// The expressions of the chain with their values on this source (those of an overlay's
    /// own chain and of steps after a trim are evaluated by the engine).
    public var expressions: [EvaluatedExpression] = []
    /// The user variables the chain set, with their values on this source.
    public var variables: [EvaluatedVariable] = []
    /// The conditionals decided on this source and the branch each took.
    public var conditions: [DecidedCondition] = []
    /// What Derive read as Cloudinary does and left out, for the user to see (`explain`, reports).
    public var notes: [String] = []
}

/// Byte-spaced breakpoints are found by encoding, so the plan gives the engine the range.
public struct BreakpointSearch: Sendable, Hashable {
    public var minWidth: Int
    public var maxWidth: Int
    public var bytes: Int
    public var maxCount: Int
}

public struct Plan: Sendable, Hashable {
    public var source: SourceFacts
    public var decode: DecodePlan
    public var outputs: [PlannedOutput]

    public init(source: SourceFacts, decode: DecodePlan, outputs: [PlannedOutput]) {
        self.source = source
        self.decode = decode
        self.outputs = outputs
    }

    /// Whether some output needs faces: the engine then detects them once, for all outputs.
    public var needsFaces: Bool {
        outputs.contains { $0.operations.contains { $0.needsFaces } }
    }

    /// Whether some output names `ils`: the engine then measures it once, for all outputs.
    public var needsIllustrationScore: Bool {
        outputs.contains { $0.operations.contains { if case .deferred(let steps) = $0 { steps.contains(where: \.namesIllustrationScore) } else { false } } }
    }
}

extension PlannedOutput {
    /// What `derive explain` says an output will do with faces (the run's report says what it
    /// did): which faces privacy effects cover, and how face crops behave.
    public var faceNotes: [String] {
        var hides = false, steers = false
        func visit(_ step: Step) {
            switch step {
            case .effect(let e) where e.needsFaces: hides = true
            case .conditional(let c): (c.then + c.otherwise).forEach(visit)
            default: if step.needsFaces { steers = true }
            }
        }
        for operation in operations {
            switch operation {
            case .effect(let e) where e.needsFaces: hides = true
            case .deferred(let steps): steps.forEach(visit)
            default: if operation.needsFaces { steers = true }
            }
        }
        var notes: [String] = []
        if hides {
            notes.append("privacy effects cover every face the detector finds at its lower threshold (CenterFace: \(FaceDetectionSettings.centerFacePrivacyThreshold); crops use \(FaceDetectionSettings.centerFaceCropThreshold)), each with its whole head and a margin; the report's `privacy` counts the faces each covered")
        }
        if steers {
            notes.append("face gravities use the surer faces (CenterFace: \(FaceDetectionSettings.centerFaceCropThreshold) or more); a crop that cannot keep the largest face whole keeps its eyes, then its mouth, then its chin, and the report's `crops[].faceCut` says which")
        }
        return notes
    }
}
