internal import CPotrace
import DeriveLanguage

/// e_vectorize into SVG: the image shrunk to the trace's detail, quantised to its colours
/// (`ColorQuantizer`), and each colour layer traced by potrace (stacked: a layer is its own pixels
/// and those of every layer above it, see `VectorDocument`).
enum VectorTracer {
    struct Traced {
        var document: VectorDocument
        /// The quantised bitmap potrace read (traced size), for the metadata and for tests.
        var quantized: ColorQuantizer.Quantized
        var parameters: TraceParameters
    }

    /// Traces `input` (any size: it is shrunk to at most 1000 pixels on its larger side first).
    static func trace(_ input: VImage, colors: Int, trace: VectorTrace) throws(DeriveError) -> Traced {
        let parameters = trace.parameters(for: input.size)
        let image = try colourAndAlpha(input.standardised()).resized(to: parameters.size).inMemory()
        let pixels = try image.pixelBuffer()
        let quantized = try ColorQuantizer.quantize(pixels.pixels, bands: pixels.bands, colors: colors)
        var layers: [VectorDocument.Layer] = []
        // The path limit is kept across layers, so a trace past it stops at the layer that
        // passes it instead of tracing every colour first.
        var total = 0
        for (index, color) in quantized.palette.enumerated() {
            let bitmap = PotraceBitmap(width: pixels.width, height: pixels.height) { i in
                let v = quantized.indices[i]
                return v != ColorQuantizer.Quantized.transparent && Int(v) >= index
            }
            let curves = try bitmap.trace(parameters, limit: VectorDocument.maxCurves - total)
            total += curves.count
            guard total <= VectorDocument.maxCurves else { throw VectorDocument.tooManyPaths(nil) }
            layers.append(VectorDocument.Layer(color: color, curves: curves))
        }
        let document = VectorDocument(size: input.size, traced: parameters.size, layers: layers)
        return Traced(document: document, quantized: quantized, parameters: parameters)
    }

    /// At most colour and alpha: a source with extra bands (a 5-band TIFF) keeps its first
    /// three and, when libvips reads one as alpha, its last.
    static func colourAndAlpha(_ image: VImage) throws(DeriveError) -> VImage {
        guard image.bands > 4 else { return image }
        let colour = try VipsCall("extract_band").image("in", image).int("band", 0).int("n", 3).run().image("out")
        guard let alpha = try image.alphaBand() else { return colour }
        return try VImage.bandjoin([colour, alpha])
    }
}

/// A bitmap in potrace's layout: rows of machine words, the leftmost pixel in the most
/// significant bit. Row `y` is the image's row `y`, so the curves come out in image coordinates
/// (y down).
struct PotraceBitmap {
    let width: Int, height: Int
    let wordsPerRow: Int
    var words: [potrace_word]
    static let bits = potrace_word.bitWidth

    init(width: Int, height: Int, isSet: (Int) -> Bool) {
        self.width = width
        self.height = height
        wordsPerRow = (width + Self.bits - 1) / Self.bits
        words = Array(repeating: 0, count: wordsPerRow * height)
        for y in 0..<height {
            for x in 0..<width where isSet(y * width + x) {
                words[y * wordsPerRow + x / Self.bits] |= (1 as potrace_word) << (Self.bits - 1 - x % Self.bits)
            }
        }
    }

    /// potrace's closed curves for the set pixels (outlines and holes alike: the document fills
    /// them even-odd).
    /// Stops reading past `limit` curves (the caller refuses the trace then).
    func trace(_ p: TraceParameters, limit: Int = VectorDocument.maxCurves) throws(DeriveError) -> [VectorDocument.Curve] {
        guard let param = potrace_param_default() else { throw DeriveError(.internalError, "potrace could not allocate its parameters") }
        defer { potrace_param_free(param) }
        param.pointee.turdsize = Int32(clamping: p.turdsize)
        param.pointee.alphamax = p.alphamax
        param.pointee.opticurve = 1
        param.pointee.opttolerance = p.opttolerance
        var copy = words
        let state: UnsafeMutablePointer<potrace_state_t>? = copy.withUnsafeMutableBufferPointer { buffer in
            var bitmap = potrace_bitmap_t(w: Int32(width), h: Int32(height), dy: Int32(wordsPerRow), map: buffer.baseAddress)
            return potrace_trace(param, &bitmap)
        }
        guard let state else { throw DeriveError(.encodeFailed, "potrace failed to trace a \(width)x\(height) layer (out of memory)") }
        defer { potrace_state_free(state) }
        guard state.pointee.status == POTRACE_STATUS_OK else {
            throw DeriveError(.encodeFailed, "potrace did not finish tracing a \(width)x\(height) layer")
        }
        var curves: [VectorDocument.Curve] = []
        var path = state.pointee.plist
        while let current = path {
            let curve = current.pointee.curve
            var segments: [VectorDocument.Segment] = []
            segments.reserveCapacity(Int(curve.n))
            for i in 0..<Int(curve.n) {
                let c = curve.c[i]
                func point(_ d: potrace_dpoint_t) -> VectorDocument.Point { VectorDocument.Point(d.x, d.y) }
                if curve.tag[i] == POTRACE_CORNER {
                    segments.append(.corner(point(c.1), end: point(c.2)))
                } else {
                    segments.append(.curve(point(c.0), point(c.1), end: point(c.2)))
                }
            }
            if !segments.isEmpty { curves.append(VectorDocument.Curve(segments: segments)) }
            if curves.count > limit { break }
            path = current.pointee.next
        }
        return curves
    }
}
