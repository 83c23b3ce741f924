/// One step of a chain. Steps run in order on the decoded source; each receives the image the
/// previous one produced.
public enum Step: Sendable, Hashable {
    case resize(Resize)
    case rotate(Rotate)
    case round(RoundCorners)
    case effect(Effect)
    case trim(Trim)
    /// Flattens transparency onto a colour (`b_<color>` on its own).
    case background(Color)
    case border(Border)
    /// 0 (invisible) to 100 (unchanged).
    case opacity(WholeNumber)
    case overlay(Overlay)
    case validate(ImageConstraints)
    /// A named preset's chain, expanded in place before anything else looks at the chain.
    case preset(String)
    /// `l_lut:<file>`: a 3D colour lookup table (`.cube` or `.3dl`, `Lut3D`) applied to the
    /// image, the file found as overlays are.
    case lut(String)
    /// `$name_<value>`: sets a variable for the steps after it; changes no pixels.
    case assign(VariableAssignment)
    /// `if_<condition>/…/if_else/…/if_end`: one branch or the other, decided when planning.
    case conditional(Conditional)
    /// A component whose names come from text variables (`e_$effect:100`,
    /// `l_text:$style:Hi`), kept as written: the planner writes the variables in and reads it.
    case template(String)
    /// `q_` inside an `if_` branch (`if_!pro!_in_tags,q_90/if_else,q_30`): the output's quality
    /// when the branch it stands in is taken, decided when planning; the last one walked wins
    /// over the output's own.
    case quality(Quality)

    /// The JSON key of the step object (`{"resize": {...}}`).
    public var key: String {
        switch self {
        case .resize: "resize"
        case .rotate: "rotate"
        case .round: "round"
        case .effect(let e): e.name
        case .trim: "trim"
        case .background: "background"
        case .border: "border"
        case .opacity: "opacity"
        case .overlay: "overlay"
        case .validate: "validate"
        case .lut: "lut"
        case .preset: "preset"
        case .assign: "variable"
        case .conditional: "if"
        case .template: "template"
        case .quality: "quality"
        }
    }
}

extension Step {
    /// Whether the engine must find faces to run this step (to place or hide something on
    /// them, or to know how many there are).
    public var needsFaces: Bool {
        if namesFaceCount { return true }
        return switch self {
        case .resize(let r): r.gravity?.needsFaces == true
        case .effect(let e): e.needsFaces
        case .overlay(let o): o.gravity?.needsFaces == true || o.chain.contains { $0.needsFaces }
        case .conditional(let c): (c.then + c.otherwise).contains { $0.needsFaces }
        default: false
        }
    }

    /// Whether a quality step stands here or in a branch under it.
    var setsQuality: Bool {
        switch self {
        case .quality: true
        case .conditional(let c): (c.then + c.otherwise).contains { $0.setsQuality }
        default: false
        }
    }
}

/// The resize modes of the geometry table (Cloudinary's `c_` values).
public enum ResizeMode: String, Sendable, Hashable, CaseIterable {
    case scale, fit, limit, mfit, fill, lfill, pad, lpad, mpad, crop, thumb, auto
    /// `c_fill_pad`, `c_auto_pad`: a content-aware fill that pads instead of cutting into the
    /// faces (`FillPad`).
    case fillPad = "fill_pad"
    case autoPad = "auto_pad"

    /// Modes that cut a window out of the (scaled) image and so take a gravity and offsets.
    public var crops: Bool { [.fill, .lfill, .crop, .thumb, .auto, .fillPad, .autoPad].contains(self) }
    /// Modes that may pad, and so take a background: the pad modes, and fill_pad and auto_pad.
    public var takesBackground: Bool { pads || self == .fillPad || self == .autoPad }
    /// Modes that place the scaled image on a canvas and so take a gravity, offsets and a background.
    public var pads: Bool { [.pad, .lpad, .mpad].contains(self) }
    public var takesGravity: Bool { crops || pads }

    /// The gravity a step of this mode gets when it names none: content-aware for `thumb` and
    /// `auto`, the top-left corner when offsets are given (as with `c_crop`), else the centre.
    public func defaultGravity(hasOffsets: Bool) -> Gravity {
        if self == .thumb || self == .auto || self == .fillPad || self == .autoPad { return .smart(.auto) }
        return hasOffsets ? .compass(.northWest) : .center
    }
}

/// `c_*, w_, h_, ar_, g_, x_, y_, dpr_, z_` (and `b_` with the pad modes).
public struct Resize: Sendable, Hashable {
    public var mode: ResizeMode
    public var width: Length?
    public var height: Length?
    /// Width divided by height, from `16:9` or `1.78`.
    public var aspectRatio: Double?
    public var gravity: Gravity?
    public var x: Length?
    public var y: Length?
    public var dpr: Double?
    public var background: Color?
    /// `z_`: with `c_thumb` or `c_crop` and a face gravity, above 1 zooms in on the face and
    /// below 1 takes in more of its surroundings.
    public var zoom: Double?
    /// `ar_`, `dpr_` and `z_` written as expressions (`ar_iar`, `dpr_$density`); the planner
    /// evaluates each into the field above before the step is checked and laid out.
    public var aspectRatioExpression: ArithmeticExpression?
    public var dprExpression: ArithmeticExpression?
    public var zoomExpression: ArithmeticExpression?
    /// `fl_relative`, in an overlay's own chain: fractional widths and heights are of the image
    /// the overlay is placed on, not of the overlay (`l_logo,c_scale,w_0.25,fl_relative` is a
    /// quarter of the base image's width). The planner turns them into pixels there.
    public var relative = false
    /// `b_blurred`, `b_auto`: with a pad mode, the padding is filled from the image itself
    /// instead of a colour (`background` is then nil).
    public var padFill: PadFill?
    /// `a_auto_right`, `a_auto_left` beside the resize: turn the image a quarter first (clockwise
    /// or anticlockwise) when its orientation (landscape or portrait) is not the requested box's.
    public var autoTurn: AutoTurn?

    /// Whether an aspect ratio is given, as a number or as an expression.
    public var hasAspectRatio: Bool { aspectRatio != nil || aspectRatioExpression != nil }

    public init(mode: ResizeMode = .scale, width: Length? = nil, height: Length? = nil,
                aspectRatio: Double? = nil, gravity: Gravity? = nil, x: Length? = nil, y: Length? = nil,
                dpr: Double? = nil, background: Color? = nil, zoom: Double? = nil) {
        self.mode = mode
        self.width = width
        self.height = height
        self.aspectRatio = aspectRatio
        self.gravity = gravity
        self.x = x
        self.y = y
        self.dpr = dpr
        self.background = background
        self.zoom = zoom
    }
}

/// `a_auto_right` (clockwise) and `a_auto_left`.
public enum AutoTurn: String, Sendable, Hashable, CaseIterable {
    case right, left

    /// The quarter turn for an image of `size` and a requested box, or nil when their
    /// orientations agree (or either is square, or a side of the box is unknown).
    public func degrees(for size: Size, box: (width: Int?, height: Int?)) -> Double? {
        guard let bw = box.width, let bh = box.height, bw != bh, size.width != size.height else { return nil }
        guard (bw > bh) != (size.width > size.height) else { return nil }
        return self == .right ? 90 : -90
    }
}

/// What fills a pad mode's padding when it is not a fixed colour.
public enum PadFill: Sendable, Hashable {
    /// `b_blurred[:<intensity>][:<brightness>]`: the image scaled to cover the canvas, blurred
    /// (intensity 1–2000, default 100, as e_blur) and brightened or darkened (-300–100, default 0).
    case blurred(intensity: Int, brightness: Int)
    /// `b_auto[:<mode>][:palette_...]`: a colour taken from the image (restricted to a palette
    /// when one is given).
    case auto(AutoPadColor, palette: [Color] = [])
    /// `b_auto:<source>_gradient...`: a gradient through colours taken from the image.
    case gradient(AutoGradient)

    public static let blurredDefaults = (intensity: 100, brightness: 0)
    public static let intensityRange = 1...2000
    public static let brightnessRange = -300...100

    /// `b_blurred:400:15`, `b_auto:predominant`, defaults left out.
    public var cloudinaryText: String {
        switch self {
        case .blurred(let i, let b):
            if b != PadFill.blurredDefaults.brightness { return "blurred:\(i):\(b)" }
            return i == PadFill.blurredDefaults.intensity ? "blurred" : "blurred:\(i)"
        case .auto(let mode, let palette):
            if !palette.isEmpty { return "auto:" + mode.rawValue + ":" + AutoPalette.text(palette) }
            return mode == .border ? "auto" : "auto:" + mode.rawValue
        case .gradient(let g): return g.cloudinaryText
        }
    }
}

/// `b_auto`'s modes Derive draws: the colour of the image's border (the default) or its
/// predominant colour, or black or white, whichever contrasts with that colour more.
public enum AutoPadColor: String, Sendable, Hashable, CaseIterable {
    case border, predominant
    case borderContrast = "border_contrast"
    case predominantContrast = "predominant_contrast"

    /// The pad colour from the border's and the predominant colours (computed by the engine),
    /// restricted to a palette when one is given.
    public func color(border: Color, predominant: Color, palette: [Color]) -> Color {
        guard !palette.isEmpty else { return color(border: border, predominant: predominant) }
        let read = self == .border || self == .borderContrast ? border : predominant
        return AutoPalette.pick(read, palette: palette, contrast: self == .borderContrast || self == .predominantContrast)
    }

    /// The pad colour from the border's and the predominant colours (computed by the engine).
    public func color(border: Color, predominant: Color) -> Color {
        switch self {
        case .border: border
        case .predominant: predominant
        case .borderContrast: Self.contrasting(border)
        case .predominantContrast: Self.contrasting(predominant)
        }
    }

    /// Black or white, whichever is farther in Rec. 709 luma.
    static func contrasting(_ c: Color) -> Color {
        let luma = 0.2126 * Double(c.red) + 0.7152 * Double(c.green) + 0.0722 * Double(c.blue)
        return luma >= 128 ? .black : .white
    }
}

/// `a_<deg>`, `a_hflip`, `a_vflip`: flips first, then a clockwise rotation by any angle; the
/// canvas grows to hold the result and the background fills the corners.
public struct Rotate: Sendable, Hashable {
    public var angle: Double
    public var horizontalFlip: Bool
    public var verticalFlip: Bool
    public var background: Color?
    /// `a_<expression>` (`a_$angle`, `a_iar_mul_10`): whole degrees the planner evaluates into
    /// `angle` (which is 0 until then).
    public var angleExpression: ArithmeticExpression?

    public init(angle: Double = 0, horizontalFlip: Bool = false, verticalFlip: Bool = false, background: Color? = nil,
                angleExpression: ArithmeticExpression? = nil) {
        self.angleExpression = angleExpression
        self.angle = angle
        self.horizontalFlip = horizontalFlip
        self.verticalFlip = verticalFlip
        self.background = background
    }
}

/// `r_<px>`, `r_a:b:c:d`, `r_max`: outside the corners becomes transparent (or the background).
public struct RoundCorners: Sendable, Hashable {
    public enum Radius: Sendable, Hashable {
        /// An ellipse touching all four edges (a circle on a square image).
        case max
        /// Top-left, top-right, bottom-right, bottom-left, in pixels (or expressions of them,
        /// until planned).
        case corners([WholeNumber])
    }

    public var radius: Radius
    public var background: Color?

    public init(radius: Radius, background: Color? = nil) {
        self.radius = radius
        self.background = background
    }
}

/// `e_simulate_colorblind`'s conditions (Cloudinary's names; deuteranopia is the default).
public enum ColorblindCondition: String, Sendable, Hashable, CaseIterable {
    case deuteranopia, protanopia, tritanopia, deuteranomaly, tritanomaly
    case coneMonochromacy = "cone_monochromacy"
    case rodMonochromacy = "rod_monochromacy"

    /// The matrix on linear RGB. Dichromacies are Machado, Oliveira and Fernandes (2009), "A
    /// Physiologically-based Model for Simulation of Color Vision Deficiency", IEEE TVCG 15(6),
    /// severity 1.0. The anomalies mix 60 % of that with the identity (Machado's severity 0.6
    /// table is close to this mix); rod monochromacy keeps only luminance (Rec. 709 weights);
    /// cone (blue-cone) monochromacy keeps a fifth of the colour on top of it — both
    /// approximations, as Cloudinary does not document its own.
    public var matrix: [[Double]] {
        let identity: [[Double]] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        let luma: [[Double]] = Array(repeating: [0.2126, 0.7152, 0.0722], count: 3)
        func mix(_ a: [[Double]], _ b: [[Double]], _ t: Double) -> [[Double]] {
            (0..<3).map { r in (0..<3).map { c in (1 - t) * a[r][c] + t * b[r][c] } }
        }
        switch self {
        case .protanopia: return [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]
        case .deuteranopia: return [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]
        case .tritanopia: return [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]
        case .deuteranomaly: return mix(identity, ColorblindCondition.deuteranopia.matrix, 0.6)
        case .tritanomaly: return mix(identity, ColorblindCondition.tritanopia.matrix, 0.6)
        case .rodMonochromacy: return luma
        case .coneMonochromacy: return mix(luma, identity, 0.2)
        }
    }

    /// Daltonisation (Fidaner, Lin and Ozguven, "Analysis of Color Blindness", 2005): the
    /// colour this condition loses, `in − simulated`, is added back through
    /// [[0, 0, 0], [0.7, 1, 0], [0.7, 0, 1]], so a red-green difference shows in green's
    /// lightness and in blue: I + C (I − M), on linear RGB.
    public var daltonisation: [[Double]] {
        let m = matrix
        let c: [[Double]] = [[0, 0, 0], [0.7, 1, 0], [0.7, 0, 1]]
        var out: [[Double]] = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
        for r in 0..<3 {
            for col in 0..<3 {
                for k in 0..<3 {
                    let lost: Double = (k == col ? 1 : 0) - m[k][col]
                    out[r][col] += c[r][k] * lost
                }
            }
        }
        return out
    }
}

/// e_cartoonify's colours: reduced by a level (0 keeps them, 100 leaves two per channel), by the
/// line strength when not given (Cloudinary: "automatically adjusts according to the
/// line_strength value"), or black and white (`bw`).
public enum CartoonColors: Sendable, Hashable {
    case auto
    case reduction(Int)
    case blackwhite

    /// Levels per channel after the reduction, nil when the colours are kept: 16 at a
    /// reduction of 1, falling evenly to 2 at 100.
    public func levels(lineStrength: Int) -> Int? {
        let r: Int
        switch self {
        case .auto: r = lineStrength
        case .reduction(let n): r = n
        case .blackwhite: r = max(lineStrength, 50)
        }
        guard r > 0 else { return nil }
        return max(2, Int((2 + Double(100 - r) / 100 * 14).rounded()))
    }
}

/// e_vectorize as a raster: Derive flattens colours instead of tracing paths.
public enum Vectorize {
    /// Levels per channel for at most `colors` colours where 2 levels each (8 colours) allow
    /// it: ⌊∛colors⌋, at least 2 (Cloudinary's 2–30 give 2 or 3).
    public static func levels(colors: Int) -> Int {
        var n = 2
        while (n + 1) * (n + 1) * (n + 1) <= colors { n += 1 }
        return n
    }
}

/// Which edges e_gradient_fade fades: the one its x or y names, that one and the opposite one
/// (`symmetric`), or both into the padding of the pad crop before it (`symmetric_pad`).
public enum FadeEdges: String, Sendable, Hashable, CaseIterable {
    case one, symmetric
    case symmetricPad = "symmetric_pad"
}

/// e_outline's modes: the outline outside the shape (beneath the image) or inside its edge
/// (over it); `fill` and `inner_fill` draw the same and also fill the shape's transparent
/// interior (the holes it encloses) with the colour, `fill` the whole shape beneath the image.
public enum OutlineMode: String, Sendable, Hashable, CaseIterable {
    case outer, inner
    case innerFill = "inner_fill"
    case fill

    /// Whether the outline is drawn inside the shape's edge, over the image.
    public var isInner: Bool { self == .inner || self == .innerFill }
    /// Whether the shape's transparent interior is filled too.
    public var fills: Bool { self == .fill || self == .innerFill }
}

/// `e_art:<filter>`: Cloudinary's named artistic looks (the names of its SDKs' ArtisticFilter).
/// Cloudinary does not document what each does, so each is Derive's own fixed colour grade in
/// their spirit, one affine map on RGB; they approximate Cloudinary's looks, not reproduce them.
public enum ArtFilter: String, Sendable, Hashable, CaseIterable {
    case alDente = "al_dente"
    case athena, audrey, aurora, daguerre, eucalyptus, fes, frost, hairspray, hokusai, incognito, linen, peacock, primavera, quartz
    case redRock = "red_rock"
    case refresh, sizzle, sonnet, ukulele, zorro

    /// The grade's parts: saturation (0 is grey, 1 unchanged), contrast about mid-grey,
    /// brightness added (of 255), then a gain per channel (the warmth or tint of the look).
    var parts: (saturation: Double, contrast: Double, brightness: Double, gains: [Double]) {
        switch self {
        case .alDente: (1.1, 1.05, 0, [1.08, 1.0, 0.88])
        case .athena: (0.9, 1.0, 10, [0.95, 1.0, 1.08])
        case .audrey: (0, 1.2, 0, [1, 1, 1])
        case .aurora: (1.1, 1.0, 0, [0.9, 1.05, 1.05])
        case .daguerre: (0, 0.9, 0, [1.1, 1.0, 0.8])
        case .eucalyptus: (0.8, 0.9, 8, [0.92, 1.06, 0.96])
        case .fes: (0.85, 0.85, 12, [1.06, 1.0, 0.94])
        case .frost: (0.7, 1.0, 6, [0.92, 0.98, 1.1])
        case .hairspray: (1.2, 1.0, 8, [1.06, 1.02, 0.94])
        case .hokusai: (1.35, 1.15, 0, [1.0, 1.0, 1.05])
        case .incognito: (0.6, 1.1, -12, [0.95, 1.0, 1.02])
        case .linen: (0.75, 0.8, 15, [1.04, 1.0, 0.95])
        case .peacock: (1.25, 1.05, 0, [0.9, 1.04, 1.08])
        case .primavera: (1.15, 1.0, 6, [1.0, 1.06, 0.96])
        case .quartz: (0.9, 1.05, 0, [1.04, 0.96, 1.06])
        case .redRock: (1.1, 1.05, 0, [1.15, 0.95, 0.88])
        case .refresh: (1.2, 1.08, 5, [1, 1, 1])
        case .sizzle: (1.3, 1.1, 0, [1.1, 1.0, 0.85])
        case .sonnet: (0.7, 0.9, 5, [1.02, 0.95, 1.06])
        case .ukulele: (1.1, 1.0, 10, [1.08, 1.02, 0.9])
        case .zorro: (0.8, 1.3, -8, [1, 1, 1])
        }
    }

    /// The grade as `out = matrix · rgb + offset` on 8-bit sRGB values: saturation mixes each
    /// channel with Rec. 709 luma, contrast scales about 128, then brightness and the gains.
    public var grade: (matrix: [[Double]], offset: [Double]) {
        let (s, c, b, g) = parts
        let luma = [0.2126, 0.7152, 0.0722]
        let matrix = (0..<3).map { r in (0..<3).map { col in g[r] * c * (s * (r == col ? 1 : 0) + (1 - s) * luma[col]) } }
        let offset = (0..<3).map { r in g[r] * (128 * (1 - c) + b) }
        return (matrix, offset)
    }
}

/// Colour and filter effects (`e_<name>[:<amount>]`); an amount may be an expression
/// (`e_blur:w_div_10`), which the planner evaluates like a length.
public enum Effect: Sendable, Hashable {
    case tint(amount: WholeNumber, color: Color)
    /// A tint through several colours, or one colour on the equalised luminance (TintGradient),
    /// mixed in by the amount (0..100); Cloudinary's `e_tint` with `equalize` or more colours.
    case tintGradient(amount: WholeNumber, gradient: TintGradient)
    /// Pixels within the tolerance (a CIE76 distance in Lab) of `from` (the predominant colour
    /// when nil) take the matching shade of `to`.
    case replaceColor(WholeNumber, to: Color, from: Color?)
    /// Cloudinary's theme change (dark mode and back): the image's main background colour
    /// becomes `color`, and what is drawn on that background (text, lines, icons) keeps its
    /// contrast with it, lightness mirrored when the new background is on the other side of mid
    /// grey. Photographic areas are left as they are; `photosensitivity` (0..200, default 100)
    /// is how readily an area counts as photographic: 0 changes the whole image, 200 nothing
    /// (`ThemeMask`).
    case theme(WholeNumber, color: Color)
    /// Pixels within the tolerance (0..100, a CIE76 distance in Lab) of the colour (the edges'
    /// colour when nil) become transparent.
    case makeTransparent(WholeNumber, color: Color?)
    /// Helps colour-blind viewers tell reds from greens: diagonal stripes of the given strength
    /// (1..100), one direction over reds and the other over greens, or with `xray` the colours
    /// themselves shifted (daltonised) so the red-green difference shows in lightness and blue.
    case assistColorblind(WholeNumber, xray: Bool)
    /// A colour matrix: 9 numbers (3x3, on RGB) or 16 (4x4, on RGBA), row by row.
    case recolor([Double])
    /// A cartoon: flat colours (fewer levels per channel) and dark lines along the edges,
    /// thicker and more of them as the line strength (0..100) rises.
    case cartoonify(WholeNumber, colors: CartoonColors)
    /// The image as few flat colours (Cloudinary's number of colours, 2..30): traced into SVG
    /// paths when the output is `f_svg` (with the tracing settings), a raster of flat colour
    /// regions otherwise.
    case vectorize(WholeNumber, trace: VectorTrace = VectorTrace())
    /// Warps the image onto new corners (in perspective) or bends it into an arc; the canvas
    /// becomes the result's bounding box, transparent where the image does not reach.
    case distort(Distortion)
    /// A shadow of the image's shape in a colour, offset by x and y (pixels, fractions of the
    /// image's side, or expressions until planned), blurred and as opaque as the strength
    /// (0..100) says, beneath the image; the canvas grows to hold both.
    case shadow(WholeNumber, color: Color, x: Length, y: Length)
    /// Fades the image to transparent from one edge: `y` (default 0.5, the top half) or `x`,
    /// positive from the top or left, negative from the bottom or right, as a fraction or
    /// pixels; `symmetric` fades the opposite edge too, `symmetric_pad` both edges of the image
    /// into the padding a pad crop just added. Strength (0..100) shapes the ramp.
    case gradientFade(WholeNumber, edges: FadeEdges, x: Length?, y: Length?)
    /// Blurs a given rectangle (`x_,y_,w_,h_`), or the whole image without one.
    case blurRegion(WholeNumber, Region?)
    /// Pixelates a given rectangle, or the whole image without one.
    case pixelateRegion(WholeNumber, Region?)
    /// An effect the step catalogue alone describes (`StepCatalogue.effects`, `Form.declared`):
    /// parsed, printed, decoded, encoded and checked from its declaration, drawn by name.
    case declared(DeclaredEffect)

    public enum Kind: String, Sendable, CaseIterable {
        case tint
        case replaceColor = "replace_color"
        case theme
        case makeTransparent = "make_transparent"
        case recolor
        case assistColorblind = "assist_colorblind"
        case cartoonify, vectorize, shadow, distort
        case gradientFade = "gradient_fade"
        case blurRegion = "blur_region"
        case pixelateRegion = "pixelate_region"
        /// Every effect of the catalogue's own (`Effect.declared`); its name is `Effect.name`.
        case declared = "(declared)"
    }

    /// The declared effect of this name (one of the catalogue's own), its amount given or its
    /// default, the other parameters their defaults.
    public static func named(_ name: String, _ amount: WholeNumber? = nil) -> Effect {
        let d = DeclaredEffect(name: name, values: StepCatalogue.effect(named: name)?.parameters.compactMap(\.defaultValue) ?? [])
        return .declared(amount.map(d.with(amount:)) ?? d)
    }

    /// Cloudinary's name, which is also the JSON key.
    public var name: String {
        if case .declared(let d) = self { return d.name }
        return kind.rawValue
    }

    public var kind: Kind {
        switch self {
        case .tint, .tintGradient: .tint
        case .replaceColor: .replaceColor
        case .theme: .theme
        case .makeTransparent: .makeTransparent
        case .recolor: .recolor
        case .assistColorblind: .assistColorblind
        case .cartoonify: .cartoonify
        case .vectorize: .vectorize
        case .distort: .distort
        case .shadow: .shadow
        case .gradientFade: .gradientFade
        case .blurRegion: .blurRegion
        case .pixelateRegion: .pixelateRegion
        case .declared: .declared
        }
    }

    /// The effect's one number, if it has one (an expression until planned).
    public var amount: WholeNumber? {
        switch self {
        case .replaceColor(let n, _, _), .theme(let n, _), .makeTransparent(let n, _), .assistColorblind(let n, _),
             .cartoonify(let n, _), .vectorize(let n, _), .shadow(let n, _, _, _), .gradientFade(let n, _, _, _), .blurRegion(let n, _), .pixelateRegion(let n, _),
             .tint(let n, _), .tintGradient(let n, _): n
        case .declared(let d): d.amount
        case .recolor, .distort: nil
        }
    }

    /// Pointwise effects change each pixel on its own, so they commute with resampling and do
    /// not force a full-size decode when they come before a resize.
    public var isPointwise: Bool {
        switch self {
        case .tint, .recolor: true
        // With their colour given they are pointwise; without, the colour is the image's.
        case .replaceColor(_, _, let from): from != nil
        // Equalising reads the whole image's histogram.
        case .tintGradient(_, let gradient): !gradient.equalize
        case .makeTransparent(_, let color): color != nil
        case .assistColorblind, .cartoonify, .vectorize, .distort, .shadow, .gradientFade, .blurRegion, .pixelateRegion: false
        // Which areas are photographic, and the background colour, are read from the image.
        case .theme: false
        case .declared(let d): d.declaration.pointwise
        }
    }

    /// Effects applied where faces are, which the engine must find first.
    public var needsFaces: Bool {
        if case .declared(let d) = self { d.declaration.needsFaces } else { false }
    }
}

/// A rectangle of the image a step receives: pixels, or fractions of its size.
public struct Region: Sendable, Hashable {
    public var x: Length
    public var y: Length
    public var width: Length
    public var height: Length

    public init(x: Length, y: Length, width: Length, height: Length) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle in an image of `size`, clipped to it; nil when nothing of it is inside.
    public func rect(in size: Size) -> Rect? {
        func px(_ d: Length, _ length: Int) -> Int {
            switch d {
            case .pixels(let p): p
            case .fraction(let f): Int((f * Double(length)).rounded())
            case .expression: Length.unevaluated()
            }
        }
        return FaceGeometry.clipped(Rect(x: px(x, size.width), y: px(y, size.height), width: px(width, size.width),
                                         height: px(height, size.height)), to: size)
    }
}

/// `e_trim[:tolerance[:color]]`: removes a uniform border. The colour defaults to the top-left
/// pixel's.
public struct Trim: Sendable, Hashable {
    public var tolerance: Int
    public var color: Color?

    public init(tolerance: Int = EffectRules.trimDefaultTolerance, color: Color? = nil) {
        self.tolerance = tolerance
        self.color = color
    }
}

/// `bo_<w>px_solid_<color>`: a solid border; the canvas grows by twice the width.
public struct Border: Sendable, Hashable {
    public var width: Int
    public var color: Color
    /// The width as an expression (`bo_w_div_100px_solid_black`); the planner evaluates it
    /// into `width` before the step is checked and laid out.
    public var widthExpression: ArithmeticExpression?

    public init(width: Int, color: Color, widthExpression: ArithmeticExpression? = nil) {
        self.width = width
        self.color = color
        self.widthExpression = widthExpression
    }
}

/// `l_<source>` … `fl_layer_apply`: a second image or a text, transformed by its own chain and
/// placed by gravity and offsets.
public struct Overlay: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        /// A source URI, or a name resolved against the configured overlay location.
        case image(String)
        case text(TextLayer)
        /// The image as an image variable kept it (`$img_current`, then `l_$img`): set by the
        /// planner, never written in a chain.
        case snapshot(String)
    }

    public var source: Source
    public var chain: [Step]
    /// Compass or focal placement; `face`/`faces` place the overlay on the largest face or on
    /// every face.
    public var gravity: Gravity?
    public var x: Length?
    public var y: Length?
    /// `fl_region_relative`: fractional sizes in the overlay's chain are of the face it is
    /// placed on, not of the overlay itself (`w_1.1` is a tenth wider than the face).
    public var regionRelative: Bool
    /// `u_` instead of `l_`: the layer is drawn beneath the image, which keeps its size and
    /// shows the layer where it is transparent.
    public var underlay: Bool
    /// How the layer combines with the image (`e_multiply,fl_layer_apply`); nil draws it over.
    public var blend: BlendMode?
    /// `e_anti_removal:<level>`'s level (1–100); nil is Cloudinary's default, 50.
    public var blendLevel: Int?
    /// `fl_tiled`: the layer repeated across the whole image, one tile where the gravity and
    /// offsets put it and the others beside it.
    public var tiled = false

    public init(source: Source, chain: [Step] = [], gravity: Gravity? = nil, x: Length? = nil, y: Length? = nil,
                regionRelative: Bool = false, underlay: Bool = false, blend: BlendMode? = nil) {
        self.underlay = underlay
        self.blend = blend
        self.source = source
        self.chain = chain
        self.gravity = gravity
        self.x = x
        self.y = y
        self.regionRelative = regionRelative
    }
}

/// Cloudinary's blend modes, written beside `fl_layer_apply` (`e_multiply,fl_layer_apply`):
/// how an overlay's pixels combine with the image beneath them.
public enum BlendMode: String, Sendable, Hashable, CaseIterable {
    /// Darkens: each channel the product of the two (white in the layer changes nothing).
    case multiply
    /// Lightens: the inverse of multiplying the inverses (black in the layer changes nothing).
    case screen
    /// Multiplies the image's darks and screens its lights: the layer's contrast over the image.
    case overlay
    /// The image is kept only where the layer is opaque (the layer's alpha cuts it out).
    case mask
    /// The image becomes transparent where the layer is opaque (a hole the layer's shape).
    case cutOut = "cut_out"
    /// `e_anti_removal[:<level>]`: the layer drawn over, slightly distorted so that it is hard to
    /// remove (Derive's approximation: a smooth displacement from a fixed seed).
    case antiRemoval = "anti_removal"
    /// `fl_cutter`: the image kept only where the layer is opaque, and cut to the layer's
    /// rectangle (the result is the size of the layer, within the image).
    case cutter
    /// `e_displace,fl_layer_apply,x_<px>,y_<px>`: the layer is a displacement map, not drawn:
    /// each pixel of the image under it is moved by its red (horizontally) and green
    /// (vertically) channel, 0 by the full x_ (y_) one way, 255 the full amount the other, the
    /// middle not at all. Here x_ and y_ are the amounts, not the layer's offsets.
    case displace
    /// `fl_replace_image`: the layer, transformed by its own chain, replaces the image: the
    /// result is the layer at its own size (`l_sample,fl_replace_image,e_cartoonify` is the
    /// cartoonified sample).
    case replaceImage = "replace_image"

    /// The level `e_anti_removal` has when none is written.
    public static let defaultAntiRemovalLevel = 50

    /// The blend mode written `e_<name>` (every one but `fl_cutter`, a flag).
    public static func effect(named name: String) -> BlendMode? {
        BlendMode(rawValue: name).flatMap { $0 == .cutter || $0 == .replaceImage ? nil : $0 }
    }

    /// How a Cloudinary string writes it beside `fl_layer_apply`.
    public func cloudinaryText(level: Int?) -> String {
        switch self {
        case .cutter, .replaceImage: "fl_" + rawValue
        default: "e_" + rawValue + (level.map { ":\($0)" } ?? "")
        }
    }
}

/// The upload "dimensions validator": the job fails permanently if the image at this point in
/// the chain does not satisfy every constraint given.
public struct ImageConstraints: Sendable, Hashable {
    public var minWidth: Int?
    public var maxWidth: Int?
    public var minHeight: Int?
    public var maxHeight: Int?
    public var maxPixels: Int?
    /// Allowed source formats (`jpeg`, `png`, ...); checked against the source's sniffed format.
    public var formats: [ImageFormat]?

    public init(minWidth: Int? = nil, maxWidth: Int? = nil, minHeight: Int? = nil, maxHeight: Int? = nil,
                maxPixels: Int? = nil, formats: [ImageFormat]? = nil) {
        self.minWidth = minWidth
        self.maxWidth = maxWidth
        self.minHeight = minHeight
        self.maxHeight = maxHeight
        self.maxPixels = maxPixels
        self.formats = formats
    }

    public var isEmpty: Bool {
        minWidth == nil && maxWidth == nil && minHeight == nil && maxHeight == nil && maxPixels == nil && formats == nil
    }
}
