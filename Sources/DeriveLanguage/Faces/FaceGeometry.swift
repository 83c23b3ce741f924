import Foundation

/// The pure geometry of faces: where a crop window goes given the faces in an image, what
/// region `c_thumb` and `c_crop` take around a face, how much around a face a privacy effect
/// covers, and where boxes land after each operation. The engine supplies the pixels' answers
/// (the faces, libvips' attention window); every decision is made here.
public enum FaceGeometry {
    /// The box a gravity is about: the largest face, or the box around all of them.
    public static func target(_ faces: [Rect], _ target: FaceTarget) -> Rect? {
        guard let largest = largest(faces) else { return nil }
        switch target {
        case .largest: return largest
        case .all: return faces.dropFirst().reduce(faces[0]) { union($0, $1) }
        }
    }

    /// The largest face, whatever its score (`g_face`): CenterFace's boxes are continuous (not
    /// dlib's steps of a pyramid level), so the largest box is the nearest face. Boxes within 5%
    /// of the largest area count as equally large, so that rounding a box when it is scaled
    /// (source pixels, decoded pixels) cannot change the answer; of those, the first (the
    /// detector's most confident).
    public static func largest(_ faces: [Rect]) -> Rect? {
        guard let most = faces.map(\.size.pixels).max() else { return nil }
        return faces.first { Double($0.size.pixels) >= 0.95 * Double(most) }
    }

    /// A face with the hair and chin around it: detector boxes run from the eyebrows to the
    /// mouth, so a crop at the box edge would cut the forehead.
    public static func head(_ face: Rect) -> Rect {
        let dx = Double(face.width) * 0.2
        return Rect(x: Int((Double(face.x) - dx).rounded()), y: Int((Double(face.y) - Double(face.height) * 0.45).rounded()),
                    width: Int((Double(face.width) + 2 * dx).rounded()), height: Int((Double(face.height) * 1.7).rounded()))
    }

    /// Places a `window` in an `image` for a content-aware gravity. Face gravities centre the
    /// window on their target; `auto` keeps every face that fits (largest first, with its head
    /// when that fits too) and lets attention's choice (`attention`, the window libvips would
    /// cut) decide the rest. Without faces, face gravities fall back to the centre or, with
    /// `:auto`, to attention.
    public static func window(_ window: Size, in image: Size, faces: [Rect], gravity: SmartCrop,
                              attention: Rect?, x: Length? = nil, y: Length? = nil) -> CropDecision {
        let w = min(window.width, image.width), h = min(window.height, image.height)
        let inside = faces.compactMap { clipped($0, to: image) }
        func centred(on box: Rect) -> Rect {
            let cx = Double(box.x) + Double(box.width) / 2 + shift(x, along: box.width)
            let cy = Double(box.y) + Double(box.height) / 2 + shift(y, along: box.height)
            return Rect(x: clamp(Int((cx - Double(w) / 2).rounded()), 0, image.width - w),
                        y: clamp(Int((cy - Double(h) / 2).rounded()), 0, image.height - h), width: w, height: h)
        }
        /// Centred on a face's head, moved as little as needed to keep the face itself inside.
        /// A face taller than the window loses its forehead first, then its chin: the window
        /// ends at the chin unless that would start it below the eyes (a quarter down a box
        /// that runs from the forehead to the chin), so eyes come before mouth before chin.
        func centred(onHeadOf box: Rect) -> Rect {
            var r = centred(on: head(box))
            if box.width <= w { r.x = clamp(r.x, box.x + box.width - w, box.x) }
            if box.height <= h {
                r.y = clamp(r.y, box.y + box.height - h, box.y)
            } else {
                r.y = min(box.y + box.height - h, box.y + box.height / 4)
            }
            r.x = clamp(r.x, 0, image.width - w)
            r.y = clamp(r.y, 0, image.height - h)
            return r
        }
        func decision(_ rect: Rect, _ basis: CropDecision.Basis, fallback: CropDecision.Basis? = nil) -> CropDecision {
            CropDecision(rect: rect, input: image, basis: basis, fallback: fallback,
                         facesKept: inside.filter { contains(rect, $0) }.count, facesSeen: inside.count).notingCut(of: inside)
        }
        let centre = Rect(x: (image.width - w) / 2, y: (image.height - h) / 2, width: w, height: h)

        switch gravity {
        case .entropy:
            return decision(attention ?? centre, .entropy)
        case .auto:
            guard !inside.isEmpty else { return decision(attention ?? centre, .attention) }
            let kept = keepable(inside, window: Size(w, h))
            let largest = Self.largest(inside)!
            if !contains(kept, head(largest)) {
                // Not even the largest head fits: centre on it, so the window cuts hair and
                // chin evenly rather than wherever attention would slide it.
                return decision(centred(onHeadOf: largest), .faces)
            }
            guard let preferred = attention else { return decision(centred(on: kept), .faces) }
            // The window may move anywhere that still holds the kept faces; attention chooses where.
            let x0 = clamp(preferred.x, max(0, kept.x + kept.width - w), min(kept.x, image.width - w))
            let y0 = clamp(preferred.y, max(0, kept.y + kept.height - h), min(kept.y, image.height - h))
            let rect = kept.width <= w && kept.height <= h ? Rect(x: x0, y: y0, width: w, height: h) : centred(on: kept)
            return decision(rect, .faces)
        default:
            let basis: CropDecision.Basis = gravity.faceTarget == .largest ? .face : .faces
            guard let faceTarget = gravity.faceTarget, let box = target(inside, faceTarget) else {
                if gravity.fallback == .auto { return decision(attention ?? centre, .attention, fallback: .attention).with(basis: basis) }
                return decision(centre, .center, fallback: .center).with(basis: basis)
            }
            // Centred on the head: with room to spare it comes along with the face; without,
            // hair and chin are cut evenly.
            return decision(centred(onHeadOf: box), basis)
        }
    }

    /// The box around as many faces as fit in a window, largest first; each counts with its
    /// head when that fits. The largest face alone if even it does not fit.
    static func keepable(_ faces: [Rect], window: Size) -> Rect {
        let sorted = faces.sorted { $0.size.pixels > $1.size.pixels }
        func fits(_ r: Rect) -> Bool { r.width <= window.width && r.height <= window.height }
        let first = head(sorted[0])
        var kept = fits(first) ? first : sorted[0]
        for face in sorted.dropFirst() {
            for candidate in [union(kept, head(face)), union(kept, face)] where fits(candidate) {
                kept = candidate
                break
            }
        }
        return kept
    }

    // MARK: - c_thumb and c_crop around faces

    /// How much of the surroundings `c_thumb` takes around its target at zoom 1: the region is
    /// this many times the face box on each axis (a head-and-shoulders shot).
    /// CenterFace's boxes run from the forehead to the chin, about 1.25 times as tall as dlib's
    /// (brows to mouth), for which this was 2.2: 1.75 keeps the same head-and-shoulders shot.
    public static let thumbContext = 1.75

    /// The region `c_thumb` or `c_crop` cuts around the faces of `image` (nil when there is no
    /// face, and the step falls back), and the size it ends up as.
    ///
    /// - `c_thumb,w,h`: a region of the output's shape around the target with its context,
    ///   `z_` zooming in (above 1) or out; never smaller than the output where the image is
    ///   large enough, so a thumbnail is not enlarged; then scaled to `w`×`h`.
    /// - `c_crop,w,h`: a `w/z`×`h/z` region centred on the target, scaled by `z`.
    /// - `c_crop` without a size: the target itself (with its head at zoom 1), divided by `z`.
    /// Offsets move the centre: pixels of the step's input, or fractions of the target box.
    public static func region(for r: Resize, in image: Size, faces: [Rect]) -> (region: Rect, output: Size)? {
        guard case .smart(let gravity)? = r.gravity, let faceTarget = gravity.faceTarget,
              let box = target(faces.compactMap { clipped($0, to: image) }, faceTarget) else { return nil }
        let zoom = r.zoom ?? 1
        let cx = Double(box.x) + Double(box.width) / 2 + shift(r.x, along: box.width)
        let cy = Double(box.y) + Double(box.height) / 2 + shift(r.y, along: box.height)
        var rw: Double, rh: Double
        let (bw, bh) = requested(r, input: image)
        var output: Size?
        if r.mode == .thumb, let bw, let bh {
            let shape = Double(bw) / Double(bh)
            rw = max(Double(box.width), Double(box.height) * shape) * thumbContext / zoom
            rw = max(rw, Double(bw))
            rh = rw / shape
            if rh < Double(bh) { rh = Double(bh); rw = rh * shape }
            // Too large for the image: the largest region of that shape inside it.
            if rw > Double(image.width) { rw = Double(image.width); rh = rw / shape }
            if rh > Double(image.height) { rh = Double(image.height); rw = rh * shape }
            output = Size(bw, bh)
        } else if let bw, let bh {
            rw = min(Double(bw) / zoom, Double(image.width))
            rh = min(Double(bh) / zoom, Double(image.height))
            output = Size(ResizeGeometry.px(rw * zoom), ResizeGeometry.px(rh * zoom))
        } else {
            let focus = zoom == 1 ? head(box) : box
            rw = min(Double(bw ?? focus.width) / zoom, Double(image.width))
            rh = min(Double(bh ?? focus.height) / zoom, Double(image.height))
        }
        let width = max(1, min(Int(rw.rounded()), image.width)), height = max(1, min(Int(rh.rounded()), image.height))
        let region = Rect(x: clamp(Int((cx - Double(width) / 2).rounded()), 0, image.width - width),
                          y: clamp(Int((cy - Double(height) / 2).rounded()), 0, image.height - height),
                          width: width, height: height)
        return (region, output ?? Size(ResizeGeometry.px(Double(width) * zoom), ResizeGeometry.px(Double(height) * zoom)))
    }

    /// The size `c_thumb`/`c_crop` with a face gravity produces, when the plan can know it
    /// without the faces: both sides given.
    public static func plannedSize(for r: Resize, input: Size) -> Size? {
        let (bw, bh) = requested(r, input: input)
        guard let bw, let bh else { return nil }
        if r.mode == .thumb { return Size(bw, bh) }
        let zoom = r.zoom ?? 1
        return Size(ResizeGeometry.px(min(Double(bw) / zoom, Double(input.width)) * zoom),
                    ResizeGeometry.px(min(Double(bh) / zoom, Double(input.height)) * zoom))
    }

    /// The requested box; a thumbnail given one side is square.
    static func requested(_ r: Resize, input: Size) -> (width: Int?, height: Int?) {
        let (bw, bh) = ResizeGeometry.requestedBox(r, input: input)
        return r.mode == .thumb ? (bw ?? bh, bh ?? bw) : (bw, bh)
    }

    /// Whether a resize step cuts around faces (`c_thumb`/`c_crop` with a face gravity) rather
    /// than placing a window in the scaled image.
    public static func cutsAroundFaces(_ r: Resize) -> Bool {
        guard r.mode == .thumb || r.mode == .crop, case .smart(let gravity)? = r.gravity else { return false }
        return gravity.faceTarget != nil
    }

    // MARK: - Privacy effects

    /// The area a face blur or pixelation covers: the whole head with a margin, clipped to the
    /// image. The box runs from the forehead to the chin; the region reaches 30% of its width
    /// beyond each side (ears, and the back of a turned head), half its height above (hair) and
    /// a fifth below the chin. It holds `head(face)`, what crops keep.
    public static func privacyRegion(_ face: Rect, in image: Size) -> Rect? {
        let w = Double(face.width), h = Double(face.height)
        let x0 = Int((Double(face.x) - 0.3 * w).rounded(.down)), y0 = Int((Double(face.y) - 0.5 * h).rounded(.down))
        let x1 = Int((Double(face.x) + 1.3 * w).rounded(.up)), y1 = Int((Double(face.y) + 1.25 * h).rounded(.up))
        return clipped(Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0), to: image)
    }

    /// Which of a face's parts a window keeps, in the order crops prefer them (eyes, mouth,
    /// chin), taking a box that runs from the forehead to the chin: the eyes' line a third
    /// down, the mouth three quarters down, the chin its bottom edge. A part is kept when its
    /// line is inside the window and so is the face's middle half across.
    public static func partsKept(of face: Rect, in window: Rect) -> [FacePart] {
        let left = face.x + face.width / 4, right = face.x + face.width - face.width / 4
        guard left >= window.x, right <= window.x + window.width else { return [] }
        return FacePart.allCases.filter { part in
            let line = face.y + Int((Double(face.height) * part.depth).rounded())
            return line >= window.y && line <= window.y + window.height
        }
    }

    // MARK: - Following faces through operations

    /// Where boxes land after `operation` turned an image of `input` size into one of `output`
    /// size. Boxes cut off entirely are dropped; those cut in part are clipped.
    public static func map(_ boxes: [Rect], through operation: ImageOperation, input: Size, output: Size) -> [Rect] {
        if boxes.isEmpty { return boxes }
        switch operation {
        case .resize(let size):
            let sx = Double(size.width) / Double(input.width), sy = Double(size.height) / Double(input.height)
            return boxes.map { scaled($0, sx, sy) }
        case .crop(let rect):
            return boxes.compactMap { clipped(Rect(x: $0.x - rect.x, y: $0.y - rect.y, width: $0.width, height: $0.height), to: rect.size) }
        case .embed(let at, _, _), .padFill(let at, _, _):
            let sx = Double(at.width) / Double(input.width), sy = Double(at.height) / Double(input.height)
            return boxes.map { let s = scaled($0, sx, sy); return Rect(x: s.x + at.x, y: s.y + at.y, width: s.width, height: s.height) }
        case .border(let border):
            return boxes.map { Rect(x: $0.x + border.width, y: $0.y + border.width, width: $0.width, height: $0.height) }
        case .flip(let horizontal):
            return boxes.map {
                horizontal ? Rect(x: input.width - $0.x - $0.width, y: $0.y, width: $0.width, height: $0.height)
                    : Rect(x: $0.x, y: input.height - $0.y - $0.height, width: $0.width, height: $0.height)
            }
        case .rotate(let degrees, let canvas, _):
            return boxes.map { rotated($0, degrees: degrees, input: input, canvas: canvas) }
        case .unorient(let orientation):
            return boxes.map { stored($0, orientation: orientation, upright: input) }
        case .effect(.declared(let d)) where d.name == "shear":
            // Skewed boxes are no longer rectangles of the image: positions unknown.
            return []
        case .effect(.shadow), .effect(.declared):
            // The image moves to its place on the canvas grown for its shadow.
            guard case .effect(let effect) = operation,
                  let at = EffectGeometry.castShadow(of: effect, on: input)?.placement(on: input).image else { return boxes }
            return boxes.map { Rect(x: $0.x + at.x, y: $0.y + at.y, width: $0.width, height: $0.height) }
        case .effect(.distort):
            // Warped or bent boxes are no longer rectangles of the image: positions unknown.
            return []
        case .overlay(let o) where o.blend == .replaceImage:
            // The layer is the image now: the faces found were another image's.
            return []
        case .smartCrop, .faceCrop, .fillPad, .trim, .deferred:
            // The engine maps what these resolved to (a crop, a resize); unresolved, the
            // positions are unknown.
            return []
        case .selectPage, .selectPages, .round, .effect, .flatten, .opacity, .overlay, .lut, .dropMaskChannel, .snapshot:
            return boxes
        }
    }

    /// A box under a clockwise rotation about the image centre, on the rotated canvas.
    static func rotated(_ box: Rect, degrees: Double, input: Size, canvas: Size) -> Rect {
        let radians = degrees * .pi / 180
        let c = cos(radians), s = sin(radians)
        let cx = Double(input.width) / 2, cy = Double(input.height) / 2
        let corners = [(box.x, box.y), (box.x + box.width, box.y), (box.x, box.y + box.height), (box.x + box.width, box.y + box.height)]
        let turned = corners.map { (px, py) -> (Double, Double) in
            let dx = Double(px) - cx, dy = Double(py) - cy
            return (dx * c - dy * s + Double(canvas.width) / 2, dx * s + dy * c + Double(canvas.height) / 2)
        }
        let xs = turned.map(\.0), ys = turned.map(\.1)
        let x0 = Int(xs.min()!.rounded()), y0 = Int(ys.min()!.rounded())
        return Rect(x: x0, y: y0, width: max(1, Int(xs.max()!.rounded()) - x0), height: max(1, Int(ys.max()!.rounded()) - y0))
    }

    /// A box in an upright image moved back to the stored orientation (`a_ignore`): the
    /// inverse of EXIF orientation `orientation`.
    public static func stored(_ box: Rect, orientation: Int, upright: Size) -> Rect {
        let (W, H) = (upright.width, upright.height)
        func point(_ x: Int, _ y: Int) -> (Int, Int) {
            switch orientation {
            case 2: (W - x, y)
            case 3: (W - x, H - y)
            case 4: (x, H - y)
            case 5: (y, x)
            case 6: (y, W - x)
            case 7: (H - y, W - x)
            case 8: (H - y, x)
            default: (x, y)
            }
        }
        let a = point(box.x, box.y), b = point(box.x + box.width, box.y + box.height)
        return Rect(x: min(a.0, b.0), y: min(a.1, b.1), width: abs(a.0 - b.0), height: abs(a.1 - b.1))
    }

    // MARK: - Rectangles

    static func union(_ a: Rect, _ b: Rect) -> Rect {
        let x0 = min(a.x, b.x), y0 = min(a.y, b.y)
        return Rect(x: x0, y: y0, width: max(a.x + a.width, b.x + b.width) - x0, height: max(a.y + a.height, b.y + b.height) - y0)
    }

    /// The part of `r` inside an image of `size`; nil when none is.
    public static func clipped(_ r: Rect, to size: Size) -> Rect? {
        let x0 = max(0, r.x), y0 = max(0, r.y)
        let x1 = min(size.width, r.x + r.width), y1 = min(size.height, r.y + r.height)
        guard x1 > x0, y1 > y0 else { return nil }
        return Rect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }

    public static func contains(_ outer: Rect, _ inner: Rect) -> Bool {
        inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width
            && inner.y + inner.height <= outer.y + outer.height
    }

    static func scaled(_ r: Rect, _ sx: Double, _ sy: Double) -> Rect {
        let x0 = Int((Double(r.x) * sx).rounded()), y0 = Int((Double(r.y) * sy).rounded())
        return Rect(x: x0, y: y0, width: max(1, Int((Double(r.x + r.width) * sx).rounded()) - x0),
                    height: max(1, Int((Double(r.y + r.height) * sy).rounded()) - y0))
    }

    /// An offset from a face's centre: pixels, or a fraction of the face's size.
    public static func shift(_ offset: Length?, along length: Int) -> Double {
        switch offset {
        case .pixels(let p)?: Double(p)
        case .fraction(let f)?: f * Double(length)
        case .expression?: Length.unevaluated()
        case nil: 0
        }
    }

    static func clamp(_ value: Int, _ low: Int, _ high: Int) -> Int { ResizeGeometry.clamp(value, low, high) }
}

extension CropDecision {
    /// A fallback decision reported under the gravity that was asked for.
    func with(basis asked: Basis) -> CropDecision {
        var copy = self
        copy.fallback = basis
        copy.basis = asked
        return copy
    }
}
