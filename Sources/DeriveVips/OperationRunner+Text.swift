internal import CVips
import DeriveLanguage

/// Text layers: libvips' `text` (Pango) renders a coverage mask of the escaped text, which
/// becomes the alpha of a plane in the text colour, with the outline of a stroke beneath it.
extension OperationRunner {
    /// Text as an RGBA image. Markup characters are escaped: the text is only ever text.
    static func text(_ layer: TextLayer) throws(DeriveError) -> VImage {
        var mask = try coverage(of: layer)
        if !layer.antialias {
            // antialias_none: a pixel is inked when the glyph covers at least half of it, as a
            // rasteriser without antialiasing decides by the pixel's centre.
            mask = try mask.above(127)
        }
        var margin = layer.stroke?.width ?? 0
        if layer.noTrim { margin += layer.untrimmedMargin }
        if margin > 0 {
            mask = try VipsCall("embed").image("in", mask).int("x", margin).int("y", margin)
                .int("width", mask.width + 2 * margin).int("height", mask.height + 2 * margin)
                .enumeration("extend", "black").run().image("out")
        }
        let fill = try painted(mask, layer.color)
        guard let stroke = layer.stroke else { return fill }
        return try painted(try outline(of: mask, width: stroke.width), stroke.color).composited(fill, at: (0, 0))
    }

    /// Pango's coverage mask (one band, 0–255) of the text, cut to its ink.
    static func coverage(of layer: TextLayer) throws(DeriveError) -> VImage {
        let escaped = layer.text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
        let font = fontDescription(layer)
        // Decorations and spacing as a Pango span around the escaped text; letter_spacing is in
        // 1/1024 pt, a pixel at 72 dpi.
        var attributes: [String] = []
        if layer.underline { attributes.append(#"underline="single""#) }
        if layer.strikethrough { attributes.append(#"strikethrough="true""#) }
        if let spacing = layer.letterSpacing { attributes.append("letter_spacing=\"\(spacing * 1024)\"") }
        if let spacing = layer.lineSpacing, spacing < 0 {
            // libvips' spacing adds space only; tighter lines are a line height of the font's
            // own (one line's pitch) less the spacing, at least a pixel.
            let pitch = try linePitch(font: font)
            attributes.append("line_height=\"\(max(1, pitch + spacing) * 1024)\"")
        }
        let markup = attributes.isEmpty ? escaped : "<span \(attributes.joined(separator: " "))>\(escaped)</span>"
        var call = VipsCall("text").string("text", markup).string("font", font).int("dpi", 72)
        // Pango breaks lines at word boundaries to keep within the width (Cloudinary's c_fit,w_).
        if let width = layer.width { call = call.int("width", width) }
        if let spacing = layer.lineSpacing, spacing > 0 { call = call.int("spacing", spacing) }
        switch layer.alignment {
        case nil, .left?: break
        case .center?: call = call.enumeration("align", "centre")
        case .right?: call = call.enumeration("align", "high")
        case .justify?: call = call.bool("justify", true)
        }
        return try call.run(failing: .invalidJob).image("out")
    }

    static func fontDescription(_ layer: TextLayer) -> String {
        var font = layer.font
        if layer.bold { font += " Bold" }
        if layer.italic { font += " Italic" }
        return "\(font) \(layer.size)"
    }

    /// The distance from one line's baseline to the next in this font: two lines of "X" are
    /// one pitch taller than one (their ink is the same).
    static func linePitch(font: String) throws(DeriveError) -> Int {
        func height(_ text: String) throws(DeriveError) -> Int {
            try VipsCall("text").string("text", text).string("font", font).int("dpi", 72).run(failing: .invalidJob).image("out").height
        }
        return try height("X\nX") - height("X")
    }

    /// The mask grown by `width` pixels in every direction: a dilation of its half-covered
    /// pixels by a disc of that radius, its edge softened by a half-pixel blur, and never less
    /// than the mask itself.
    static func outline(of mask: VImage, width: Int) throws(DeriveError) -> VImage {
        let size = 2 * width + 1
        let limit = (Double(width) + 0.5) * (Double(width) + 0.5)
        // 255: must be set; 128: either (libvips' morph); the disc's pixels are those whose
        // centre lies within the radius plus half a pixel.
        let disc: [[Double]] = (0..<size).map { y in
            (0..<size).map { x in
                let dx = Double(x - width), dy = Double(y - width)
                return dx * dx + dy * dy <= limit ? 255 : 128
            }
        }
        let flat = disc.flatMap { $0 }
        guard let m = vips_image_new_matrix_from_array(Int32(size), Int32(size), flat, Int32(flat.count)) else {
            throw DeriveError(.internalError, "could not make a matrix: \(VipsRuntime.takeError())")
        }
        let grown = try VipsCall("morph").image("in", try mask.above(127)).image("mask", VImage(owning: m))
            .enumeration("morph", "dilate").run().image("out")
        let soft = try grown.gaussianBlurred(sigma: 0.5).cast("uchar")
        let softer = try VipsCall("relational").image("left", soft).image("right", mask).enumeration("relational", "less").run().image("out")
        return try VipsCall("ifthenelse").image("cond", softer).image("in1", mask).image("in2", soft).run().image("out")
    }

    /// A plane of `colour` with the mask as its alpha (scaled by the colour's own alpha).
    static func painted(_ mask: VImage, _ colour: Color) throws(DeriveError) -> VImage {
        let plane = try mask.constant(values: [Double(colour.red), Double(colour.green), Double(colour.blue)]).interpreted(as: "srgb")
        return try plane.joined(with: try mask.linear([Double(colour.alpha) / 255], [0]))
    }
}
