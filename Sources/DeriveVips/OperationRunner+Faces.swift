import DeriveLanguage

/// What the runner does with faces: windows that keep them, regions cut around them, privacy
/// effects over them, overlays placed on them. The decisions are FaceGeometry's; this file
/// only asks libvips for what the pixels say (attention) and does the cutting.
extension OperationRunner {
    /// Where a content-aware window goes, recorded for the report.
    func window(_ size: Size, _ gravity: SmartCrop, in image: VImage, faces: [Rect]?) throws(DeriveError) -> Rect {
        let boxes = faces ?? []
        let wantsAttention = gravity == .entropy || gravity == .auto || (gravity.fallback == .auto && boxes.isEmpty)
        let attention = wantsAttention ? try image.smartCropped(to: size, strategy: gravity == .entropy ? .entropy : .auto).1 : nil
        let decision = FaceGeometry.window(size, in: image.frameSize, faces: boxes, gravity: gravity, attention: attention)
        decisions.append(decision)
        return decision.rect
    }

    /// The operations `c_thumb`/`c_crop` with a face gravity resolve to (`Planner.faceCrop`, the
    /// decision the planner makes too when the crop is decided before the decode), recorded.
    func faceCrop(_ r: Resize, in input: Size, faces: [Rect]?) throws(DeriveError) -> [ImageOperation] {
        do {
            let (operations, decision) = try planner.faceCrop(r, in: input, faces: faces)
            if let decision { decisions.append(decision) }
            return operations
        } catch {
            throw DeriveError(error)
        }
    }

    /// `e_blur_faces` and `e_pixelate_faces`: each face's head blurred or pixelated in place,
    /// every face found at the privacy threshold (lower than the crops'), and the count recorded
    /// for the report. With detection off this fails rather than publish a face the job asked
    /// to hide.
    func hidingFaces(_ effect: Effect, in image: VImage, faces: JobFaces?) throws(DeriveError) -> VImage {
        // A catalogue effect that needs faces draws on them itself (none when detection is off).
        guard case .declared(let d) = effect else { return image }
        guard let coverName = ["blur_faces": "blur", "pixelate_faces": "pixelate"][d.name] else { return try DeclaredEffects.draw(d, on: image, faces: faces?.privacy ?? []).inMemory() }
        guard let faces else {
            throw DeriveError(.invalidJob, "e_\(effect.name) needs face detection, which is turned off (DERIVE_FACE_DETECTION); the output would show the faces it should hide")
        }
        let cover = Effect.named(coverName, d.amount)
        var result = image
        var covered = 0, belowCropThreshold = 0
        for face in faces.privacy {
            guard let region = FaceGeometry.privacyRegion(face, in: image.frameSize) else { continue }
            let patch = try Effects.apply(cover, to: try image.extracted(region).inMemory())
            result = try result.inserted(patch, at: (region.x, region.y))
            covered += 1
            if !faces.crops.contains(face) { belowCropThreshold += 1 }
        }
        covers.append(FaceCover(effect: effect.name, covered: covered, belowCropThreshold: belowCropThreshold))
        return covered == 0 ? image : try result.inMemory()
    }

    /// An overlay placed on the largest face (`g_face`) or on every face (`g_faces`), centred on
    /// it and moved by its offsets (pixels, or fractions of the face). With
    /// `fl_region_relative` its fractional sizes are of the face. No face: the centre, once.
    /// With a blend mode (`e_screen`, `e_mask`…), the layers of every face are drawn on one
    /// transparent canvas of the image's size, which then blends with the image once: a mask
    /// keeps every face, not only the last one drawn.
    func composite(_ overlay: Overlay, onFacesOf base: VImage, faces: [Rect]?) throws(DeriveError) -> VImage {
        guard case .smart(let gravity)? = overlay.gravity, let target = gravity.faceTarget else { return base }
        let boxes = faces ?? []
        let targets: [Rect]
        switch target {
        case .largest: targets = FaceGeometry.target(boxes, .largest).map { [$0] } ?? []
        case .all: targets = boxes
        }
        var placed = overlay
        placed.gravity = .center
        placed.regionRelative = false
        guard !targets.isEmpty else {
            return try composite(placed, onto: base)
        }
        let blend = overlay.blend.flatMap { $0 == .antiRemoval ? nil : $0 }
        var result = blend == nil ? base : try base.withAlpha().constant(.transparent, bands: 4)
        for face in targets {
            var sized = placed
            if overlay.regionRelative { sized.chain = Self.relative(overlay.chain, to: face.size) }
            sized.x = nil
            sized.y = nil
            var layer = try rendered(sized)
            if overlay.blend == .antiRemoval {
                layer = try Self.antiRemoval(layer, level: overlay.blendLevel ?? BlendMode.defaultAntiRemovalLevel)
            }
            let cx = Double(face.x) + Double(face.width) / 2 + FaceGeometry.shift(overlay.x, along: face.width)
            let cy = Double(face.y) + Double(face.height) / 2 + FaceGeometry.shift(overlay.y, along: face.height)
            result = try result.composited(layer, at: (Int((cx - Double(layer.width) / 2).rounded()), Int((cy - Double(layer.height) / 2).rounded())))
        }
        guard let blend else { return result }
        return try Self.blended(base, with: result, at: (0, 0), mode: blend)
    }

    /// A chain whose fractional resize sizes are of `region` rather than of the image.
    static func relative(_ chain: [Step], to region: Size) -> [Step] {
        chain.map { step in
            guard case .resize(var r) = step else { return step }
            if case .fraction(let f)? = r.width { r.width = .pixels(ResizeGeometry.px(f * Double(region.width))) }
            if case .fraction(let f)? = r.height { r.height = .pixels(ResizeGeometry.px(f * Double(region.height))) }
            return .resize(r)
        }
    }
}
