/// Resize qualifiers read as Cloudinary reads them: crop modes and gravities it ignores,
/// `fl_ignore_aspect_ratio`, and the `ar_` combinations it does not document.
///
/// Cloudinary's transformation reference (https://cloudinary.com/documentation/transformation_reference,
/// "Parameter types") calls `c_`, `g_`, `x_` and `y_` qualifiers: they "do not perform an action
/// on their own" but adjust the resize that `w_`, `h_` or `ar_` asks for. Without a size there is
/// no resize to adjust, and Cloudinary delivers the image unresized (`c_fill,e_grayscale`,
/// `g_north_west`, `c_scale,l_text:…`, as its SDKs' tests write them). A gravity chooses "which
/// part of an image to keep when cropping" (https://cloudinary.com/documentation/image_gravity), so
/// with a mode that neither crops nor pads (`w_100,g_north_west`, scale by default) it is ignored
/// too. Derive reads such strings the same way and says so in the plan's notes, rather than
/// refusing them; JSON, which Derive defines, still refuses the contradiction.
extension ParseRun {
    /// The resize as Cloudinary applies it: nil when nothing in it resizes, else without a
    /// gravity that the mode ignores. Each left-out parameter gets a note.
    mutating func ignoringQualifiers(_ r: Resize, in c: Component) -> Resize? {
        let sized = r.width != nil || r.height != nil || r.hasAspectRatio
        let scaled = r.dpr != nil || r.dprExpression != nil
        let qualifiers = ["c", "g", "x", "y", "z"].filter { c.params[$0] != nil }
        // A crop mode, gravity, offset or zoom with no size to make (`c_crop,x_1,y_2`,
        // `z_1.2`, `x_ih_mul_2`): Cloudinary resizes nothing, and neither does Derive.
        if !sized && !scaled && !qualifiers.isEmpty && !FaceGeometry.cutsAroundFaces(r) {
            let written = qualifiers.map { "\($0)_\(c.params[$0] ?? "")" }.joined(separator: ",")
            let what = qualifiers.contains { ["x", "y", "z"].contains($0) } && !qualifiers.contains { ["c", "g"].contains($0) }
                ? "an offset or zoom" : "a crop mode or gravity"
            note(c, "\(written): Cloudinary ignores \(what) without w_, h_ or ar_; nothing is resized")
            return nil
        }
        // A zoom with c_crop or c_thumb and a compass gravity (or none): Cloudinary's zoom "works
        // together with either the crop or thumb cropping modes while setting the gravity
        // parameter to focus on either a single face (g_face), multiple faces (g_faces) or custom
        // coordinates" (https://cloudinary.com/blog/how_to_control_the_zoom_level_with_automatic_face_detection_based_image_cropping);
        // its SDKs' doc comments say the same ("with face detection"). A compass gravity has no
        // detected coordinates to zoom around, so the zoom has nothing to act on: the crop is
        // made as if it were not there, and the notes say so. With g_auto Cloudinary does
        // zoom around what it detects, which Derive does not: still refused.
        if sized, r.mode == .crop || r.mode == .thumb, r.zoom != nil || r.zoomExpression != nil, let z = c.params["z"] {
            let compass: Bool
            switch r.gravity {
            case nil, .compass?: compass = true
            default: compass = false
            }
            if compass {
                var kept = r
                kept.zoom = nil
                kept.zoomExpression = nil
                let g = c.params["g"].map { "g_" + $0 } ?? "no gravity (center)"
                note(c, "z_\(z) with c_\(r.mode.rawValue) and \(g): Cloudinary zooms only around detected faces or custom coordinates; with a compass gravity it ignores the zoom, and so does Derive")
                return ignoringQualifiers(kept, in: c)
            }
        }
        if sized, !r.mode.takesGravity, r.gravity != nil, let g = c.params["g"], r.x == nil, r.y == nil {
            var kept = r
            kept.gravity = nil
            note(c, "g_\(g): Cloudinary ignores a gravity with mode \(r.mode.rawValue), which neither crops nor pads")
            return kept
        }
        return r
    }

    /// `fl_ignore_aspect_ratio` "allows you to specify only width or height so the value of the
    /// second axis remains as is and is not recalculated to maintain the aspect ratio"
    /// (https://cloudinary.com/documentation/transformation_flags): with c_scale and one side,
    /// the other side is the image's own (`w_200` becomes `w_200,h_1.0`); with both sides c_scale
    /// already stretches, so the flag changes nothing. Other modes are refused: their reading of
    /// the flag is not documented.
    mutating func ignoringAspectRatio(_ r: Resize?, in c: Component) -> Resize? {
        guard var r else {
            note(c, "fl_ignore_aspect_ratio with nothing resized here: no aspect ratio to keep or ignore; ignored")
            return nil
        }
        guard r.mode == .scale, !r.hasAspectRatio else {
            let written = r.hasAspectRatio ? "ar_" : "c_\(r.mode.rawValue)"
            fail(c, "fl_ignore_aspect_ratio with \(written): known to Cloudinary, not supported by Derive; Derive reads the flag with c_scale and w_ or h_ (the other side stays as it is)")
            return nil
        }
        if r.width == nil && r.height != nil { r.width = .fraction(1) }
        if r.height == nil && r.width != nil { r.height = .fraction(1) }
        return r
    }

    /// Refuses `ar_` where Cloudinary does not document the result, naming it: beside both
    /// `w_` and `h_` (which wins?), and alone with a mode that neither crops nor pads.
    mutating func refusesAspectRatio(_ r: inout Resize, in c: Component) -> Bool {
        guard r.hasAspectRatio, let ar = c.params["ar"] else { return false }
        if r.width != nil && r.height != nil {
            // Cloudinary's reference: the aspect ratio is kept "if you also set width or
            // height", i.e. it derives the one side not given; with both given there is none
            // to derive, and its SDKs' documentation examples (ar_1.0,c_fill,h_250,w_250) make
            // the w x h box.
            r.aspectRatio = nil
            r.aspectRatioExpression = nil
            note(c, "ar_\(ar) beside both w_ and h_: the width and height set the box and the ratio is ignored, as Cloudinary does")
            return false
        }
        if r.width == nil && r.height == nil && !r.mode.takesGravity {
            let mode = "c_\(r.mode.rawValue)" + (c.has("c") ? "" : " (the default)")
            fail(c, "ar_\(ar) without w_ or h_: known to Cloudinary, not supported by Derive with \(mode): Cloudinary does not document what a mode that neither crops nor pads makes of a ratio alone; give w_ or h_, or a crop or pad mode (c_fill,ar_\(ar) keeps the largest box of that shape)")
            return true
        }
        return false
    }

    mutating func note(_ component: Component, _ text: String) {
        notes.append("\(location) \(component.label): \(text)")
    }
}
