import Foundation

public struct Size: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int

    public init(_ width: Int, _ height: Int) {
        self.width = width
        self.height = height
    }

    public var pixels: Int { width * height }
    public var description: String { "\(width)x\(height)" }
    public var swapped: Size { Size(height, width) }
}

public struct Rect: Sendable, Hashable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var size: Size { Size(width, height) }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// What one resize step does to an image of a given size: resample to `scaled`, then
/// optionally cut a window out of it, then optionally place it on a larger canvas.
public struct ResizeLayout: Sendable, Hashable {
    public enum Window: Sendable, Hashable {
        case rect(Rect)
        /// Size known, position chosen on the pixels (libvips attention or entropy).
        case smart(Size, SmartCrop)

        public var size: Size {
            switch self {
            case .rect(let r): r.size
            case .smart(let s, _): s
            }
        }
    }

    public struct Canvas: Sendable, Hashable {
        public var size: Size
        /// Where the image's top-left corner lands on the canvas.
        public var origin: (x: Int, y: Int)
        public var background: Color

        public static func == (a: Canvas, b: Canvas) -> Bool {
            a.size == b.size && a.origin == b.origin && a.background == b.background
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(size)
            hasher.combine(origin.x)
            hasher.combine(origin.y)
            hasher.combine(background)
        }
    }

    public var scaled: Size
    public var window: Window?
    public var canvas: Canvas?

    public var output: Size { canvas?.size ?? window?.size ?? scaled }
}

/// The geometry table of TRANSFORMS.md, as one pure function per step.
public enum ResizeGeometry {
    /// Rounds to the nearest pixel, never below 1.
    public static func px(_ value: Double) -> Int {
        guard value.isFinite else { return 1 }
        return max(1, Int(min(value, 1e9).rounded()))
    }

    /// The box a resize step asks for, in pixels of the image it receives: fractions resolved,
    /// the missing side derived from `ar`, multiplied by `dpr`, rounded.
    public static func requestedBox(_ r: Resize, input: Size) -> (width: Int?, height: Int?) {
        let W = Double(input.width), H = Double(input.height)
        var bw = r.width?.resolve(against: input.width)
        var bh = r.height?.resolve(against: input.height)
        if let ar = r.aspectRatio {
            switch (bw, bh) {
            case (let w?, nil): bh = w / ar
            case (nil, let h?): bw = h * ar
            case (nil, nil):
                // Only an aspect ratio: the largest box of that shape inside the image for the
                // cropping modes, the smallest around it for the padding modes.
                let wider = W / H > ar
                if r.mode.pads {
                    (bw, bh) = wider ? (W, W / ar) : (H * ar, H)
                } else {
                    (bw, bh) = wider ? (H * ar, H) : (W, W / ar)
                }
            default: break
            }
        }
        let dpr = r.dpr ?? 1
        return (bw.map { px($0 * dpr) }, bh.map { px($0 * dpr) })
    }

    public static func layout(_ r: Resize, input: Size) -> ResizeLayout {
        let W = Double(input.width), H = Double(input.height)
        let (bw, bh) = requestedBox(r, input: input)
        let kw = bw.map { Double($0) / W }
        let kh = bh.map { Double($0) / H }
        let kfit = min(kw ?? .infinity, kh ?? .infinity)
        let kcov = max(kw ?? -.infinity, kh ?? -.infinity)
        let both = bw != nil && bh != nil

        func scaled(_ k: Double) -> Size {
            // The side that was asked for comes out exact, whatever the floating point.
            var size = Size(px(W * k), px(H * k))
            if k == kw, let bw { size.width = bw }
            if k == kh, let bh { size.height = bh }
            return size
        }

        func cropped(_ k: Double) -> ResizeLayout {
            let s = scaled(k)
            let window = Size(min(bw ?? s.width, s.width), min(bh ?? s.height, s.height))
            return ResizeLayout(scaled: s, window: place(window, in: s, r: r, scale: k), canvas: nil)
        }

        func padded(_ k: Double) -> ResizeLayout {
            let s = scaled(k)
            let canvasSize = Size(max(bw ?? s.width, s.width), max(bh ?? s.height, s.height))
            if canvasSize == s { return ResizeLayout(scaled: s, window: nil, canvas: nil) }
            let origin = Placement.origin(inner: s, outer: canvasSize, gravity: compass(r.gravity),
                                          x: r.x, y: r.y)
            return ResizeLayout(scaled: s, window: nil,
                                canvas: .init(size: canvasSize, origin: origin, background: r.background ?? .transparent))
        }

        switch r.mode {
        case .scale:
            if both { return ResizeLayout(scaled: Size(bw!, bh!), window: nil, canvas: nil) }
            return ResizeLayout(scaled: scaled(kfit), window: nil, canvas: nil)
        case .fit:
            return ResizeLayout(scaled: scaled(kfit), window: nil, canvas: nil)
        case .limit:
            return ResizeLayout(scaled: scaled(min(1, kfit)), window: nil, canvas: nil)
        case .mfit:
            return ResizeLayout(scaled: scaled(max(1, kfit)), window: nil, canvas: nil)
        // fill_pad and auto_pad: the output box of a fill; the engine decides whether to pad.
        case .fill, .thumb, .auto, .fillPad, .autoPad:
            return both ? cropped(kcov) : ResizeLayout(scaled: scaled(kfit), window: nil, canvas: nil)
        case .lfill:
            return both ? cropped(min(1, kcov)) : ResizeLayout(scaled: scaled(min(1, kfit)), window: nil, canvas: nil)
        case .pad:
            return padded(kfit)
        case .lpad:
            return padded(min(1, kfit))
        case .mpad:
            // A source larger than the box is left unscaled and unpadded.
            if kfit < 1 { return ResizeLayout(scaled: input, window: nil, canvas: nil) }
            return padded(kfit)
        case .crop:
            let window = Size(min(bw ?? input.width, input.width), min(bh ?? input.height, input.height))
            return ResizeLayout(scaled: input, window: place(window, in: input, r: r, scale: 1), canvas: nil)
        }
    }

    /// Positions a crop window inside the scaled image according to the step's gravity.
    static func place(_ window: Size, in image: Size, r: Resize, scale: Double) -> ResizeLayout.Window? {
        if window == image { return nil }
        switch r.gravity ?? r.mode.defaultGravity(hasOffsets: r.x != nil || r.y != nil) {
        case .smart(let strategy):
            return .smart(window, strategy)
        case .focus(let fx, let fy):
            // Pixel focal points are given in the step's input, so they scale with the image.
            let cx = fractionOrScaled(fx, length: image.width, scale: scale)
            let cy = fractionOrScaled(fy, length: image.height, scale: scale)
            let x = clamp(Int((cx - Double(window.width) / 2).rounded()), 0, image.width - window.width)
            let y = clamp(Int((cy - Double(window.height) / 2).rounded()), 0, image.height - window.height)
            return .rect(Rect(x: x, y: y, width: window.width, height: window.height))
        case .compass(let c):
            let origin = Placement.origin(inner: window, outer: image, gravity: c, x: r.x, y: r.y)
            return .rect(Rect(x: origin.x, y: origin.y, width: window.width, height: window.height))
        }
    }

    static func compass(_ gravity: Gravity?) -> Compass {
        if case .compass(let c)? = gravity { return c }
        return .center
    }

    static func fractionOrScaled(_ d: Length, length: Int, scale: Double) -> Double {
        switch d {
        case .fraction(let f): f * Double(length)
        case .pixels(let p): Double(p) * scale
        case .expression: Length.unevaluated()
        }
    }

    static func clamp(_ value: Int, _ low: Int, _ high: Int) -> Int { max(low, min(value, max(low, high))) }

    /// Multiples of 90 degrees turn pixels exactly, with no resampling and no background.
    public static func isRightAngle(_ degrees: Double) -> Bool {
        degrees.truncatingRemainder(dividingBy: 90) == 0
    }

    /// The canvas of a clockwise rotation by any angle: the bounding box of the turned image.
    public static func rotatedSize(_ size: Size, degrees: Double) -> Size {
        let turns = degrees / 90
        if turns == turns.rounded() {
            return Int(turns) % 2 == 0 ? size : size.swapped
        }
        let radians = degrees * .pi / 180
        let c = abs(cos(radians)), s = abs(sin(radians))
        let w = Double(size.width), h = Double(size.height)
        return Size(px(w * c + h * s), px(w * s + h * c))
    }
}

/// Anchoring an inner rectangle in an outer one by a compass gravity and offsets; used for crop
/// windows, padded canvases and overlays alike, so all three follow one rule.
public enum Placement {
    /// Offsets point away from the anchored edge (toward the centre); fractions are of the
    /// outer size. The result is clamped so the inner rectangle stays inside the outer one
    /// when it fits.
    public static func origin(inner: Size, outer: Size, gravity: Compass, x: Length?, y: Length?) -> (x: Int, y: Int) {
        (axis(inner.width, outer.width, gravity.horizontal, x),
         axis(inner.height, outer.height, gravity.vertical, y))
    }

    static func axis(_ inner: Int, _ outer: Int, _ anchor: Int, _ offset: Length?) -> Int {
        let base: Int
        switch anchor {
        case -1: base = 0
        case 0: base = (outer - inner) / 2
        default: base = outer - inner
        }
        let shift: Int
        switch offset {
        case .pixels(let p)?: shift = p
        case .fraction(let f)?: shift = Int((f * Double(outer)).rounded())
        case .expression?: Length.unevaluated()
        case nil: shift = 0
        }
        let position = anchor == 1 ? base - shift : base + shift
        if inner > outer { return position }
        return max(0, min(position, outer - inner))
    }
}
