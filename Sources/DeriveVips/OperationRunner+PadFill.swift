import DeriveCore

/// `b_blurred` and `b_auto`: padding filled from the image itself. The placement is the
/// planner's (the same as a colour's); only what fills the rest is decided here.
extension OperationRunner {
    static func padded(_ image: VImage, at: Rect, canvas: Size, fill: PadFill) throws(DeriveError) -> VImage {
        switch fill {
        case .auto(let mode):
            // The border's colour is the median of the outermost ring (EdgeColor), the
            // predominant one the most frequent of a small preview (DominantColor).
            let border = EdgeColor.of(try Effects.edgePixels(of: image)) ?? .white
            var predominant = DominantColor.of(try image.resized(to: VipsEngine.previewSize(image.frameSize)).cast("uchar").pixelBuffer())
            if predominant == .transparent { predominant = border }
            return try image.embedded(at: (at.x, at.y), canvas: canvas, background: mode.color(border: border, predominant: predominant))
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
