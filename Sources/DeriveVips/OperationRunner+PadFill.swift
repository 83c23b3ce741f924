import DeriveLanguage

/// `b_blurred` and `b_auto`: padding filled from the image itself. The placement is the
/// planner's (the same as a colour's); only what fills the rest is decided here.
extension OperationRunner {
    static func padded(_ image: VImage, at: Rect, canvas: Size, fill: PadFill) throws(DeriveError) -> VImage {
        switch fill {
        case .auto(let mode, let palette):
            // The border's colour is the median of the outermost ring (EdgeColor), the
            // predominant one the most frequent of a small preview (DominantColor).
            let border = EdgeColor.of(try Effects.edgePixels(of: image)) ?? .white
            var predominant = DominantColor.of(try image.resized(to: VipsEngine.previewSize(image.frameSize)).cast("uchar").pixelBuffer())
            if predominant == .transparent { predominant = border }
            return try image.embedded(at: (at.x, at.y), canvas: canvas, background: mode.color(border: border, predominant: predominant, palette: palette))
        case .gradient(let gradient):
            // The colours from a small preview (GradientPad), a 256-entry table through them,
            // and each canvas pixel's position along the direction (0–255, from libvips' xyz)
            // looked up in it (maplut); the image over it where the planner placed it.
            let preview = try image.resized(to: VipsEngine.previewSize(image.frameSize)).cast("uchar").pixelBuffer()
            let table = try VImage.fromPixels(GradientPad.lookupTable(GradientPad.colors(of: preview, gradient: gradient)), width: 256, height: 1, bands: 3)
                .interpreted(as: "srgb")
            let sx = 1 / Double(max(1, canvas.width - 1)), sy = 1 / Double(max(1, canvas.height - 1))
            let (a, b, offset): (Double, Double, Double) = switch gradient.direction {
            case .horizontal: (sx, 0, 0)
            case .vertical: (0, sy, 0)
            case .diagonalDesc: (sx / 2, sy / 2, 0)
            case .diagonalAsc: (sx / 2, -sy / 2, 0.5)
            }
            let xy = try Effects.coordinates(canvas)
            let position = try xy.recombined([[a * 255, b * 255]], uchar: false).linear([1], [offset * 255]).cast("uchar")
            let back = try VipsCall("maplut").image("in", position).image("lut", table).run().image("out").interpreted(as: "srgb")
            return try back.composited(image, at: (at.x, at.y)).inMemory()
        case .blurred(let intensity, let brightness):
            // The image scaled to cover the canvas and cut to it at the centre, blurred as
            // e_blur is (sigma intensity / 20), its colour scaled by 1 + brightness / 100 (-300
            // is black); the image over it where the planner placed it.
            let k = max(Double(canvas.width) / Double(image.width), Double(canvas.height) / Double(image.height))
            let cover = Size(max(canvas.width, ResizeGeometry.px(Double(image.width) * k)), max(canvas.height, ResizeGeometry.px(Double(image.height) * k)))
            let a = max(0, 1 + Double(brightness) / 100)
            let back = try image.resized(to: cover)
                .extracted(Rect(x: (cover.width - canvas.width) / 2, y: (cover.height - canvas.height) / 2, width: canvas.width, height: canvas.height))
                .gaussianBlurred(sigma: max(0.3, Double(intensity) / 20))
                .changingColour { (colour) throws(DeriveError) in
                    try colour.linear(Array(repeating: a, count: colour.bands), Array(repeating: 0, count: colour.bands))
                }
            return try back.composited(image, at: (at.x, at.y)).inMemory()
        }
    }
}
