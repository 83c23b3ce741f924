import DeriveLanguage

/// Executes planned operations on an image. The geometry is the planner's; the runner decides
/// only what content decides (smart and face crops, trims, deferred steps, overlay sizes), and
/// does so through DeriveLanguage's functions so that it agrees with `derive explain`. It follows
/// the job's faces through every operation, so each content-aware step sees them where they are.
final class OperationRunner {
    let planner: Planner
    let overlays: any OverlayLoader
    let engine: VipsEngine
    let sourceFormat: ImageFormat
    /// The job's faces in the decoded image's pixels (those privacy effects cover and the surer
    /// ones crops go by); nil when nobody looked (detection is off, or no output needs faces).
    let faces: JobFaces?
    /// The content-aware crops taken since the last `takeDecisions()`, for the output's report.
    var decisions: [CropDecision] = []
    /// The privacy effects applied since the last `takeDecisions()`: how many faces each covered.
    var covers: [FaceCover] = []
    private var overlayCache: [Overlay: VImage] = [:]
    /// Images kept by image variables (`$img_current`) for the layers that draw them, each with
    /// the number of those layers still to come: one image per name, released after its last use.
    private var snapshots: [String: (image: VImage, uses: Int, faces: JobFaces?)] = [:]
    /// How many images variables keep now (none once a run has drawn every layer).
    var keptSnapshots: Int { snapshots.count }
    private var lutCache: [String: Lut3D] = [:]

    /// `l_lut:`: the file loaded as overlays are and read once per job, then every pixel's
    /// RGB mapped through it (alpha kept).
    func applyingLut(_ name: String, to image: VImage) throws(DeriveError) -> VImage {
        let lut: Lut3D
        if let cached = lutCache[name] {
            lut = cached
        } else {
            do {
                lut = try Lut3D.parse(overlays.load(name).bytes, name: name)
            } catch {
                throw error.prefixed("l_lut:\(name.replacingOccurrences(of: "/", with: ":"))")
            }
            lutCache[name] = lut
        }
        return try image.changingColour { (colour) throws(DeriveError) in
            let rgb = try colour.rgb().cast("uchar")
            var pixels = try rgb.pixelBuffer()
            lut.apply(to: &pixels.pixels, bands: pixels.bands)
            return try VImage.fromPixels(pixels.pixels, width: pixels.width, height: pixels.height, bands: pixels.bands).interpreted(as: "srgb")
        }
    }

    /// The job's illustration score (`ils`), measured on the decoded source when an output
    /// names it.
    let illustrationScore: Double?

    init(engine: VipsEngine, overlays: any OverlayLoader, sourceFormat: ImageFormat, faces: JobFaces? = nil, illustrationScore: Double? = nil) {
        self.engine = engine
        self.planner = engine.planner
        self.overlays = overlays
        self.sourceFormat = sourceFormat
        self.faces = faces
        self.illustrationScore = illustrationScore
    }

    func takeDecisions() -> (crops: [CropDecision], covers: [FaceCover]) {
        defer {
            decisions = []
            covers = []
        }
        return (decisions, covers)
    }

    /// Runs the operations; returns the image and the operations with every content-dependent
    /// one replaced by what it resolved to, for the other frames of an animation.
    func run(_ operations: [ImageOperation], on start: VImage) throws(DeriveError) -> (VImage, [ImageOperation]) {
        var tracked = faces
        return try run(operations, on: start, faces: &tracked)
    }

    func run(_ operations: [ImageOperation], on start: VImage, faces tracked: inout JobFaces?) throws(DeriveError) -> (VImage, [ImageOperation]) {
        var image = start
        var resolved: [ImageOperation] = []
        /// Applies a resolved operation and moves the faces with it.
        func perform(_ operation: ImageOperation) throws(DeriveError) {
            let input = image.frameSize
            image = try apply(operation, to: image)
            tracked = tracked?.mapped(through: operation, input: input, output: image.frameSize)
            resolved.append(operation)
        }
        for (index, operation) in operations.enumerated() {
            switch operation {
            case .snapshot(let name):
                // Kept in memory, as the chain goes on changing the image, only if a layer after
                // it draws it; a later assignment of the name replaces it.
                let uses = operations[(index + 1)...].filter { Self.draws($0, snapshot: name) }.count
                snapshots[name] = uses == 0 ? nil : (try image.inMemory(), uses, tracked)
                resolved.append(operation)
                continue
            case .smartCrop(let size, let gravity):
                try perform(.crop(try window(size, gravity, in: image, faces: tracked?.crops)))
            case .fillPad(let target, let background):
                let planned = FillPad.operations(input: image.frameSize, target: target, background: background, faces: tracked?.crops)
                let (result, inner) = try run(planned, on: image, faces: &tracked)
                image = result
                resolved += inner
            case .faceCrop(let r):
                let (result, inner) = try run(try faceCrop(r, in: image.frameSize, faces: tracked?.crops), on: image, faces: &tracked)
                image = result
                resolved += inner
            case .trim(let trim):
                let box = try image.trimBox(threshold: Double(trim.tolerance), background: trim.color)
                if box.width > 0 && box.height > 0 && box.size != image.size { try perform(.crop(box)) }
            case .deferred(let steps):
                let (planned, _) = try planned(steps, on: image.frameSize)
                let (result, inner) = try run(planned, on: image, faces: &tracked)
                image = result
                resolved += inner
            case .effect(let effect) where effect.needsFaces:
                image = try hidingFaces(effect, in: image, faces: tracked)
                resolved.append(operation)
            case .overlay(let overlay) where overlay.gravity?.needsFaces == true:
                image = try composite(overlay, onFacesOf: image, faces: tracked?.crops)
                resolved.append(operation)
            default:
                try perform(operation)
            }
            if case .overlay(let o) = operation, case .snapshot(let name) = o.source, let kept = snapshots[name] {
                snapshots[name] = kept.uses > 1 ? (kept.image, kept.uses - 1, kept.faces) : nil
            }
        }
        return (image, resolved)
    }

    /// Whether an operation is a layer that draws the image kept under `name`.
    static func draws(_ operation: ImageOperation, snapshot name: String) -> Bool {
        if case .overlay(let o) = operation, case .snapshot(name) = o.source { true } else { false }
    }

    /// Runs operations on every frame of an animation, deciding content-dependent ones on the
    /// first frame so that all frames are cut the same way.
    /// A page set (`selectPages`, first when present) picks the frames before the rest runs.
    func runAnimated(_ operations: [ImageOperation], on image: VImage) throws(DeriveError) -> VImage {
        if case .selectPages(let pages)? = operations.first {
            return try runAnimated(Array(operations.dropFirst()), on: try Self.pages(pages, of: image))
        }
        let frames = try image.frames()
        let (first, resolved) = try run(operations, on: frames[0])
        var results = [first]
        // The report counts what the first frame's privacy effects covered, once.
        let reported = covers.count
        for frame in frames.dropFirst() {
            results.append(try run(resolved, on: frame).0)
        }
        covers.removeSubrange(reported...)
        let delays = image.ints("delay")
        let loop = image.int("loop")
        let stacked = try VImage.stacked(results)
        return try stacked.withMetadata { pointer in
            Metadata.setInt(pointer, "page-height", first.height)
            if let delays { Metadata.setInts(pointer, "delay", delays) }
            if let loop { Metadata.setInt(pointer, "loop", loop) }
        }
    }

    /// These frames (1-based) of a multi-page image, in order, as a multi-page image with their
    /// delays; a still image is its own page 1.
    static func pages(_ pages: [Int], of image: VImage) throws(DeriveError) -> VImage {
        let frames = try image.frames()
        guard let missing = pages.first(where: { !(1...frames.count).contains($0) }) else {
            let delays = image.ints("delay")
            let loop = image.int("loop")
            let stacked = try VImage.stacked(pages.map { frames[$0 - 1] })
            return try stacked.withMetadata { pointer in
                Metadata.setInt(pointer, "page-height", frames[0].height)
                if let delays, delays.count == frames.count { Metadata.setInts(pointer, "delay", pages.map { delays[$0 - 1] }) }
                if let loop { Metadata.setInt(pointer, "loop", loop) }
            }
        }
        // libvips reads a document whose pages differ in height as one page.
        throw DeriveError(.decodeFailed, "page \(missing) of the page set is not among the \(frames.count) frames decoded; a document's pages become frames only when they have one size")
    }

    func planned(_ steps: [Step], on size: Size) throws(DeriveError) -> ([ImageOperation], Size?) {
        do {
            // The job's faces, as the source had them: what `fc` counts.
            let result = try planner.operations(for: steps, input: size, sourceFormat: sourceFormat, faceCount: faces?.crops.count,
                                                illustrationScore: illustrationScore)
            return (result.operations, result.size)
        } catch {
            throw DeriveError(error)
        }
    }

    func apply(_ operation: ImageOperation, to image: VImage) throws(DeriveError) -> VImage {
        switch operation {
        case .selectPage(let page):
            guard image.pages > 1 else { return image }
            return try image.extracted(Rect(x: 0, y: (page - 1) * image.pageHeight, width: image.width, height: image.pageHeight))
        case .selectPages(let pages):
            // Reached only outside `runAnimated`, which takes it first.
            return try Self.pages(pages, of: image)
        case .unorient(let orientation):
            return try unorient(image, orientation)
        case .dropMaskChannel:
            // The colour channels as they are: the mask is not applied (not premultiplied, not
            // flattened), as if the extra channel were not there.
            return image.hasAlpha ? try image.withoutAlpha() : image
        case .resize(let size):
            return try image.resized(to: size)
        case .crop(let rect):
            return try image.extracted(rect)
        case .embed(let at, let canvas, let background):
            return try image.embedded(at: (at.x, at.y), canvas: canvas, background: background)
        case .padFill(let at, let canvas, let fill):
            return try Self.padded(image, at: at, canvas: canvas, fill: fill)
        case .flip(let horizontal):
            return try image.flipped(horizontal: horizontal)
        case .rotate(let degrees, let canvas, let background):
            let rotated = try image.rotated(degrees: degrees, canvas: canvas, background: background ?? .transparent)
            // libvips recomputes a lazy affine for every strip a later reduction asks for
            // (minutes on a photo); the canvas is bounded by the output pixel limit, so the
            // result is kept in memory instead.
            return ResizeGeometry.isRightAngle(degrees) ? rotated : try rotated.inMemory()
        case .round(let radius, let background):
            let mask = try VImage.fromPixels(Masks.roundedCorners(width: image.width, height: image.height, radius: radius),
                                             width: image.width, height: image.height, bands: 1)
            let base = background.isOpaque && !image.hasAlpha ? image : try image.withAlpha()
            return try base.blended(with: base.constant(background, bands: base.bands), mask: mask)
        case .effect(let effect):
            let changed = try Effects.apply(effect, to: image)
            // Convolutions have the same recompute problem as affines when a reduction follows.
            return effect.isPointwise ? changed : try changed.inMemory()
        case .flatten(let color):
            guard image.hasAlpha else { return image }
            if color.isOpaque { return try image.flattened(on: color) }
            return try image.constant(color, bands: image.bands).composited(image, at: (0, 0))
        case .border(let border):
            return try image.embedded(at: (border.width, border.width),
                                      canvas: Size(image.width + 2 * border.width, image.height + 2 * border.width),
                                      background: border.color)
        case .opacity(let percent):
            let withAlpha = try image.withAlpha()
            guard let alpha = try withAlpha.alphaBand() else { return withAlpha }
            return try withAlpha.withoutAlpha().joined(with: alpha.linear([Double(percent) / 100], [0]))
        case .overlay(let overlay):
            return try composite(overlay, onto: image)
        case .lut(let name):
            return try applyingLut(name, to: image)
        case .smartCrop, .faceCrop, .fillPad, .trim, .deferred, .snapshot:
            return try run([operation], on: image).0
        }
    }

    /// Undoes the turn the decoder applied for an EXIF orientation: 6 and 8 are each other's
    /// inverse; every other orientation is its own.
    func unorient(_ image: VImage, _ orientation: Int) throws(DeriveError) -> VImage {
        try VipsDecoder.upright(image, orientation: orientation == 6 ? 8 : orientation == 8 ? 6 : orientation)
    }

    // MARK: - Overlays

    func composite(_ overlay: Overlay, onto base: VImage) throws(DeriveError) -> VImage {
        var layer = try rendered(overlay)
        // fl_replace_image: the layer, at its own size, is the image from here on.
        if overlay.blend == .replaceImage { return layer }
        if overlay.blend == .antiRemoval {
            layer = try Self.antiRemoval(layer, level: overlay.blendLevel ?? BlendMode.defaultAntiRemovalLevel)
        }
        let gravity: Compass
        if case .compass(let c)? = overlay.gravity { gravity = c } else { gravity = .center }
        // e_displace: x_ and y_ are how far the map moves pixels, not where it lies.
        let displaces = overlay.blend == .displace
        var origin = Placement.origin(inner: layer.size, outer: base.size, gravity: gravity,
                                      x: displaces ? nil : overlay.x, y: displaces ? nil : overlay.y)
        if overlay.tiled {
            // fl_tiled: copies of the layer side by side over the whole image, one of them at
            // the placed origin; then drawn like one layer of the image's size.
            let (w, h) = (layer.width, layer.height)
            let big = try VipsCall("replicate").image("in", layer).int("across", (base.width + w - 1) / w + 1)
                .int("down", (base.height + h - 1) / h + 1).run().image("out")
            let shift = (x: ((w - origin.x % w) % w + w) % w, y: ((h - origin.y % h) % h + h) % h)
            layer = try big.extracted(Rect(x: shift.x, y: shift.y, width: base.width, height: base.height))
            origin = (0, 0)
        }
        switch overlay.blend {
        case nil, .antiRemoval: break
        case .multiply, .screen, .overlay, .mask, .cutOut: return try Self.blended(base, with: layer, at: origin, mode: overlay.blend!)
        case .cutter: return try Self.cut(base, by: layer, at: origin)
        case .replaceImage: return layer  // returned above, before the layer is placed
        case .displace:
            // Fractions and expressions resolve as offsets do, against the image's sides.
            let amount = (x: try Self.pixels(overlay.x, of: base.width), y: try Self.pixels(overlay.y, of: base.height))
            return try Self.displaced(base, by: layer, at: origin, amount: amount)
        }
        guard overlay.underlay else { return try base.composited(layer, at: origin) }
        // An underlay: the layer on a transparent canvas of the base's size, the base over it.
        let canvas = try base.withAlpha().constant(.transparent, bands: 4).composited(layer, at: origin)
        let result = try canvas.composited(base, at: (0, 0))
        return base.hasAlpha ? result : try result.withoutAlpha()
    }

    /// A layer combined with the image by a blend mode that works pixel by pixel.
    static func blended(_ base: VImage, with layer: VImage, at origin: (x: Int, y: Int), mode: BlendMode) throws(DeriveError) -> VImage {
        switch mode {
        // The image's alpha times the layer's (dest-in) or times its complement (dest-out);
        // outside the layer it is fully transparent for a mask and unchanged for a cut-out.
        case .mask: return try base.withAlpha().composited(layer, at: origin, mode: "dest-in")
        case .cutOut: return try base.withAlpha().composited(layer, at: origin, mode: "dest-out")
        // PDF blend modes (libvips composite): the image keeps its own alpha.
        default: return try base.composited(layer, at: origin, mode: mode.rawValue)
        }
    }

    /// The overlay as an image, decoded and transformed once per job. The layer's chain keeps
    /// its own image variables: what it assigns does not replace or release the chain's.
    func rendered(_ overlay: Overlay) throws(DeriveError) -> VImage {
        if let cached = overlayCache[overlay] { return cached }
        let outer = snapshots
        defer { snapshots = outer }
        let start: VImage
        switch overlay.source {
        case .snapshot(let name):
            // The image as the variable kept it, through the layer's own chain; not cached, as
            // each output (and each frame) keeps its own.
            guard let kept = snapshots[name] else {
                throw DeriveError(.invalidJob, "l_$\(name): the image variable $\(name) holds no image here")
            }
            // The faces as they were where the image was kept, moved with it since the source.
            let (operations, _) = try planned(overlay.chain, on: kept.image.size)
            var faces = kept.faces
            return try run(operations, on: kept.image, faces: &faces).0.standardised().inMemory()
        case .text(let text):
            start = try Self.text(text)
        case .image(let reference):
            start = try engine.decodeOverlay(overlays.load(reference), chain: overlay.chain)
        }
        // Image overlays are decoded with their chain's first resample; text runs its chain here.
        let result: VImage
        if case .text = overlay.source {
            let (operations, _) = try planned(overlay.chain, on: start.size)
            result = try run(operations, on: start).0.inMemory()
        } else {
            result = start
        }
        overlayCache[overlay] = result
        return result
    }
}
