/// Rewrites a chain into its canonical meaning: defaults made explicit, equivalent spellings
/// collapsed, and steps that change nothing removed. Two chains that mean the same thing
/// normalise to equal values; the identity hash is computed over the result.
enum Normalizer {
    static func normalize(_ steps: [Step]) -> [Step] {
        steps.flatMap { step -> [Step] in
            // A pad that cannot pad (one dimension) still puts the image on its colour, as
            // Cloudinary's `b_<colour>,c_pad,w_1.0` is documented to: it becomes a scale and a
            // flatten, so the colour is not lost when the mode reduces.
            if case .resize(let r) = step, r.mode.pads, let colour = r.background, colour != .transparent,
               case .resize(let reduced) = normalize(step), !reduced.mode.pads {
                return [.resize(reduced), .background(colour)]
            }
            return normalize(step).map { [$0] } ?? []
        }
    }

    /// The canonical form of one step, or nil when the step changes nothing.
    static func normalize(_ step: Step) -> Step? {
        switch step {
        case .resize(let r): return .resize(normalize(r))
        case .rotate(let r): return normalize(r).map(Step.rotate)
        case .round(let r): return normalize(r).map(Step.round)
        case .effect(let e): return isIdentity(e) ? nil : .effect(e)
        case .opacity(let o): return o == 100 ? nil : .opacity(o)
        case .overlay(var o):
            o.chain = normalize(o.chain)
            o.gravity = o.gravity ?? .center
            o.x = zeroed(o.x ?? .pixels(0))
            o.y = zeroed(o.y ?? .pixels(0))
            return .overlay(o)
        case .validate(var c):
            if let formats = c.formats { c.formats = Array(Set(formats)).sorted { $0.rawValue < $1.rawValue } }
            return .validate(c)
        case .trim, .background, .border, .preset, .assign, .template, .lut, .quality:
            return step
        case .conditional(var c):
            c.then = normalize(c.then)
            c.otherwise = normalize(c.otherwise)
            // A condition with nothing to apply either way changes nothing.
            return c.then.isEmpty && c.otherwise.isEmpty ? nil : .conditional(c)
        }
    }

    /// With one dimension (and no aspect ratio) the cropping and padding modes reduce to plain
    /// scaling, as the geometry table says; gravity, offsets and background then mean nothing.
    static func normalize(_ input: Resize) -> Resize {
        var r = input
        let oneDimension = (r.width == nil) != (r.height == nil) && !r.hasAspectRatio
        if r.zoom == 1 { r.zoom = nil }
        if oneDimension && !FaceGeometry.cutsAroundFaces(r) {
            switch r.mode {
            case .fill, .thumb, .auto, .fillPad, .autoPad: r.mode = .scale
            case .lfill, .lpad: r.mode = .limit
            case .pad: r.mode = .fit
            case .mpad: r.mode = .mfit
            case .scale, .fit, .limit, .mfit, .crop: break
            }
        }
        if !r.mode.takesGravity {
            r.gravity = nil
            r.x = nil
            r.y = nil
        } else {
            r.gravity = r.gravity ?? r.mode.defaultGravity(hasOffsets: r.x != nil || r.y != nil)
            if case .compass = r.gravity {
                r.x = zeroed(r.x ?? .pixels(0))
                r.y = zeroed(r.y ?? .pixels(0))
            }
        }
        if !r.mode.pads { r.padFill = nil }
        if r.padFill != nil {
            r.background = nil
        } else if r.mode.takesBackground {
            r.background = r.background ?? .transparent
        } else {
            r.background = nil
        }
        r.dpr = r.dprExpression == nil ? r.dpr ?? 1 : nil
        return r
    }

    static func normalize(_ input: Rotate) -> Rotate? {
        var r = input
        if r.angleExpression != nil {
            // Its angle is known per source: the corner colour stays, in case it is not square.
            r.angle = 0
            r.background = r.background ?? .transparent
            return r
        }
        if r.horizontalFlip && r.verticalFlip {
            // Flipping both ways is a half turn.
            r.horizontalFlip = false
            r.verticalFlip = false
            r.angle += 180
        }
        var angle = r.angle.truncatingRemainder(dividingBy: 360)
        if angle < 0 { angle += 360 }
        angle = Decimal6.quantize(angle)
        if angle >= 360 { angle = 0 }
        r.angle = angle
        if angle == 0 && !r.horizontalFlip && !r.verticalFlip { return nil }
        r.background = ResizeGeometry.isRightAngle(angle) ? nil : (r.background ?? .transparent)
        return r
    }

    static func normalize(_ input: RoundCorners) -> RoundCorners? {
        var r = input
        if case .corners(let radii) = r.radius {
            let four: [WholeNumber]
            switch radii.count {
            case 1: four = [radii[0], radii[0], radii[0], radii[0]]
            case 2: four = [radii[0], radii[1], radii[0], radii[1]]
            case 3: four = [radii[0], radii[1], radii[2], radii[1]]
            default: four = Array(radii.prefix(4))
            }
            if four.allSatisfy({ $0 == 0 }) { return nil }
            r.radius = .corners(four)
        }
        r.background = r.background ?? .transparent
        return r
    }

    static func isIdentity(_ e: Effect) -> Bool {
        switch e {
        case .declared(let d): d.declaration.neutral.map { d.amount == .value($0) } ?? false
        case .tint(let amount, _), .tintGradient(let amount, _): amount == 0
        default: false
        }
    }

    /// A zero offset is zero whether written as pixels or as a fraction.
    static func zeroed(_ d: Length) -> Length {
        if case .fraction(0) = d { return .pixels(0) }
        return d
    }
}
