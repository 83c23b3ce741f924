internal import CVips
internal import CVipsShim
internal import CJpegShim
import DeriveLanguage
import Foundation

/// What `q_auto` candidates are compared with: the pixels the encoder receives, or for a large
/// output a mosaic of tiles cut from it at full resolution (encoders see the same blocks and
/// edges in a tile as in the whole, so the quality found on the mosaic holds for the image,
/// at a fraction of the cost). Both sides are flattened on white before scoring.
struct PerceptualReference {
    /// The image as the encoder receives it.
    let full: VImage
    /// The image the search encodes: `full` itself, or the mosaic.
    let sample: VImage
    let tiles: Int
    /// The sample's side of the metric, prepared once for all candidates (for the whole image
    /// after a search on the sample, without its blurs until a search needs them: `searchable`).
    private(set) var metric: Ssimulacra2.Reference
    /// The sample's pixels as the metric reads them.
    let pixels: PixelBuffer
    /// Whether `pixels` are the sample's own bytes (8-bit sRGB or grey without alpha).
    let sampleIsPixels: Bool
    /// Mean absolute difference of neighbouring luma values (0–255), the search's seed.
    let complexity: Double
    /// Distinct colours in the sample, counted up to `Self.manyColours` (then one more): only
    /// whether there are more than `AutoEncoder.graphicColours` matters.
    let colours: Int
    /// The whole image's pixels as the metric reads them, when the search runs on a sample.
    let wholePixels: PixelBuffer?

    /// How much of a large output the search encodes: 16 tiles of 128×128 (512×512 in all),
    /// or 8 (512×256) for JPEG. Outputs no larger than the sample are searched whole.
    struct Sampling: Sendable, Equatable {
        let tiles: Int
        static let tileSide = 128
        var pixels: Int { tiles * Self.tileSide * Self.tileSide }

        static let standard = Sampling(tiles: 16)
        /// No sample: the whole image, whatever its size (the search again after a sample's
        /// choice missed the target on the whole image).
        static let whole = Sampling(tiles: 0)
        /// For JPEG: libjpeg-turbo encodes a 1200 px output in about 10 ms, less than one score
        /// of the standard sample, so there the metric is the cost. Half the tiles kept the
        /// sample's bias (sample minus whole-image score, JPEG quality 55–75 on the benchmark's
        /// photographs and screenshots: +0.8, deviation 1.0, against +0.9 and 0.8 with 16);
        /// smaller tiles did not (64×64: +2.4, deviation 1.3): the metric's coarse scales see
        /// the seams between tiles.
        static let jpeg = Sampling(tiles: 8)
    }

    static let manyColours = AutoEncoder.graphicColours

    /// How much higher a search on the mosaic aims, per format. Measured on the benchmark's
    /// photographs and screenshots at the quality chosen (sample score minus whole-image
    /// score): JPEG +1.0 (standard deviation 1.1), WebP −0.6 (1.7), AVIF +1.4 (1.6). The
    /// margin is about the mean plus one deviation, so few images land below the target.
    func margin(for format: OutputFormat) -> Double {
        guard !isFull else { return 0 }
        switch format {
        case .webp: return 1
        case .avif: return 3
        default: return 2
        }
    }

    var isFull: Bool { tiles == 0 }

    /// `threads`: how many the metric's reference half may use (the search's width).
    init(_ image: VImage, sampling: Sampling = .standard, threads: Int = 1) throws(DeriveError) {
        full = image
        if sampling.tiles == 0 || image.width * image.height <= sampling.pixels {
            sample = image
            tiles = 0
            wholePixels = nil
        } else {
            // The whole image's pixels: the tiles are chosen by what they hold, and the output
            // is scored on them after the search (`whole`).
            let whole = try Self.metricPixels(image)
            (sample, tiles) = try Self.mosaic(image, pixels: whole, sampling: sampling)
            wholePixels = whole
        }
        sampleIsPixels = Self.isMetricPixels(sample)
        pixels = try Self.metricPixels(sample)
        metric = try Ssimulacra2.Reference(pixels, threads: threads)
        complexity = Self.complexity(pixels)
        colours = Self.distinctColours(pixels, limit: Self.manyColours)
    }

    /// The whole image as a reference of its own, for scoring the output after a search on
    /// the sample: itself when the search ran on the whole image. Its metric side is made for
    /// that one score (XYB planes only, the blurs made beside the output's); `searchable`
    /// completes it when the output missed and the whole image is searched.
    func whole(threads: Int = 1) throws(DeriveError) -> PerceptualReference {
        guard let wholePixels else { return self }
        return try PerceptualReference(whole: full, pixels: wholePixels, threads: threads, complexity: complexity, colours: colours)
    }

    /// This reference ready for many scores (a search): its metric's blurs made once.
    func searchable(threads: Int = 1) -> PerceptualReference {
        var ready = self
        ready.metric = metric.blurred(threads: threads)
        return ready
    }

    /// The sample's complexity and colour count stand for the whole image's: a search again on
    /// the whole image starts from a measured encode, not from a seed, and only asks whether
    /// the image is a graphic.
    private init(whole image: VImage, pixels: PixelBuffer, threads: Int, complexity: Double, colours: Int) throws(DeriveError) {
        full = image
        sample = image
        tiles = 0
        wholePixels = nil
        sampleIsPixels = Self.isMetricPixels(image)
        self.pixels = pixels
        metric = try Ssimulacra2.Reference(pixels, threads: threads, blurred: false)
        self.complexity = complexity
        self.colours = colours
    }

    /// Tiles joined edge to edge, with tile corners on a 16-pixel grid so JPEG and WebP blocks
    /// line up as they do in the full image: an evenly spread grid, some of whose tiles give
    /// way to the image's darkest and smoothest regions (`SampleTiles`), where an encoder's
    /// blocks show first and a grid may see none.
    static func mosaic(_ image: VImage, pixels: PixelBuffer, sampling: Sampling) throws(DeriveError) -> (VImage, Int) {
        let tileWidth = min(Sampling.tileSide, image.width), tileHeight = min(Sampling.tileSide, image.height)
        let layout = SampleTiles.layout(pixels, tileWidth: tileWidth, tileHeight: tileHeight, count: sampling.tiles)
        let across = layout.across
        let xs = layout.origins.map { Int32($0.x) }, ys = layout.origins.map { Int32($0.y) }
        // Copied row by row from the image's pixels (the encoder's input is in memory): the
        // same image extract_area and arrayjoin would make, metadata included, for a tenth of
        // the time.
        guard let joined = dvips_mosaic(image.pointer, Int32(tileWidth), Int32(tileHeight), Int32(across), Int32(xs.count), xs, ys) else {
            throw DeriveError(.internalError, "could not cut the q_auto sample: \(VipsRuntime.takeError())")
        }
        return (VImage(owning: joined), xs.count)
    }

    /// 8-bit sRGB (or grey) pixels on white, as the metric reads them.
    /// Whether the image's own bytes are what the metric reads: 8-bit sRGB or grey, no alpha.
    static func isMetricPixels(_ image: VImage) -> Bool {
        image.isEightBit && !image.hasAlpha && (image.bands == 3 && image.interpretation == "srgb" || image.bands == 1 && image.interpretation == "b-w")
    }

    static func metricPixels(_ image: VImage) throws(DeriveError) -> PixelBuffer {
        if isMetricPixels(image), let data = vips_image_get_data(image.pointer) {
            // Already what the metric reads (the mosaic, in memory): its bytes as they are.
            let count = image.width * image.height * image.bands
            return PixelBuffer(width: image.width, height: image.height, bands: image.bands,
                               pixels: [UInt8](UnsafeRawBufferPointer(start: data, count: count)))
        }
        return try image.standardised().flattened(on: .white).cast("uchar").pixelBuffer()
    }

    /// The pixels of an encoded candidate, decoded as a browser would.
    static func decodedPixels(_ data: [UInt8], format: OutputFormat) throws(DeriveError) -> PixelBuffer {
        if format == .jpeg, let pixels = jpegPixels(data) { return pixels }
        let loader: String
        switch format {
        case .jpeg: loader = "jpegload_buffer"
        case .webp: loader = "webpload_buffer"
        case .avif: loader = "heifload_buffer"
        case .jxl: loader = "jxlload_buffer"
        case .png: loader = "pngload_buffer"
        case .gif: loader = "gifload_buffer"
        case .tiff: loader = "tiffload_buffer"
        case .heic: loader = "heifload_buffer"
        case .jp2, .jpc, .bmp, .ico, .svg, .pdf, .ai: throw DeriveError(.internalError, "\(format.rawValue) outputs are not scored")
        case .auto, .original: throw DeriveError(.internalError, "cannot score an unresolved format")
        }
        return try withBytes(data) { (buffer) throws(DeriveError) -> PixelBuffer in
            let image = try VipsCall(loader).blob("buffer", buffer).run(failing: .encodeFailed).image("out")
            return try metricPixels(image)
        }
    }

    /// A JPEG candidate decoded by libjpeg-turbo directly (the pixels jpegload gives, in a
    /// third of the time) into the buffer the metric reads, or nil for what only jpegload reads.
    static func jpegPixels(_ data: [UInt8]) -> PixelBuffer? {
        var width: Int32 = 0, height: Int32 = 0, bands: Int32 = 0
        let sized = data.withUnsafeBytes { raw in derive_jpeg_decode(raw.baseAddress, raw.count, nil, 0, &width, &height, &bands) }
        let count = Int(width) * Int(height) * Int(bands)
        guard sized == 2, count > 0 else { return nil }
        var status: Int32 = -1
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialised in
            status = data.withUnsafeBytes { raw in
                derive_jpeg_decode(raw.baseAddress, raw.count, buffer.baseAddress, count, &width, &height, &bands)
            }
            initialised = status == 0 ? count : 0
        }
        guard status == 0 else { return nil }
        return PixelBuffer(width: Int(width), height: Int(height), bands: Int(bands), pixels: pixels)
    }

    /// The sample encoded as JPEG by libjpeg-turbo directly, with the pixels jpegsave would
    /// give (see `derive_jpeg_encode`) but none of its metadata: for candidates that are only
    /// scored, never stored. Nil where the metric's pixels are not the sample's own bytes
    /// (alpha, other colour spaces), which jpegsave then encodes.
    func directJPEG(quality: Int, encoding: EncodingSettings) -> [UInt8]? {
        guard sampleIsPixels, !encoding.lossless else { return nil }
        let full: Bool
        switch encoding.chromaSubsampling {
        case .auto: full = quality >= AutoEncoder.fullChroma
        case .full: full = true
        case .half: full = false
        }
        var data: UnsafeMutablePointer<UInt8>?
        var length = 0
        let status = pixels.pixels.withUnsafeBufferPointer { p in
            derive_jpeg_encode(p.baseAddress, Int32(pixels.width), Int32(pixels.height), Int32(pixels.bands), Int32(quality),
                              full ? 1 : 0, encoding.progressive ? 1 : 0, &data, &length)
        }
        guard status == 0, let data else { return nil }
        defer { free(data) }
        return [UInt8](UnsafeBufferPointer(start: data, count: length))
    }

    /// The score of an encoding of `sample`, on `threads` threads.
    func score(_ data: [UInt8], format: OutputFormat, threads: Int = 1) throws(DeriveError) -> Double {
        try Ssimulacra2.score(reference: metric, distorted: try Self.decodedPixels(data, format: format), threads: threads)
    }

    /// The score of the sample with nothing lost but half its chroma resolution (4:2:0, each
    /// chroma value the mean of a 2×2 block, restored bilinearly as decoders do): no 4:2:0
    /// encoding of it scores higher. Nil for grey images, which have no chroma to halve.
    func subsampledChromaScore() throws(DeriveError) -> Double? {
        guard let halved = pixels.chromaHalved() else { return nil }
        return try Ssimulacra2.score(reference: metric, distorted: halved)
    }

    static func complexity(_ buffer: PixelBuffer) -> Double {
        let w = buffer.width, h = buffer.height, bands = buffer.bands
        guard w > 1, h > 1 else { return 0 }
        var total = 0
        buffer.pixels.withUnsafeBufferPointer { p in
            // Green (or grey) stands in for luma.
            let channel = bands >= 3 ? 1 : 0
            for y in 0..<(h - 1) {
                for x in 0..<(w - 1) {
                    let i = (y * w + x) * bands + channel
                    let v = Int(p[i])
                    total += abs(v - Int(p[i + bands])) + abs(v - Int(p[i + w * bands]))
                }
            }
        }
        return Double(total) / Double(2 * (w - 1) * (h - 1))
    }

    /// Distinct colours, counted up to `limit` (then `limit` + 1). A run of one colour is
    /// looked up once: flat graphics are mostly runs.
    static func distinctColours(_ buffer: PixelBuffer, limit: Int) -> Int {
        var seen = Set<UInt32>(minimumCapacity: limit + 1)
        let bands = buffer.bands
        buffer.pixels.withUnsafeBufferPointer { p in
            var i = 0
            var last: UInt32?
            while i < p.count {
                let r = UInt32(p[i]), g = bands >= 3 ? UInt32(p[i + 1]) : r, b = bands >= 3 ? UInt32(p[i + 2]) : r
                let colour = r << 16 | g << 8 | b
                i += bands
                if colour == last { continue }
                last = colour
                seen.insert(colour)
                if seen.count > limit { break }
            }
        }
        return seen.count
    }
}

@available(*, unavailable)
extension PerceptualReference: Sendable {}

