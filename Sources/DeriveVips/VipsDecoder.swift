internal import CVips
internal import CVipsShim
import DeriveCore

/// Reading headers and decoding at size. Only formats Derive recognises by their magic bytes
/// reach libvips, and each goes to the loader for that format: a file that claims one format
/// and is another never picks its own parser.
enum VipsDecoder {
    static func loader(for format: ImageFormat) -> String {
        switch format {
        case .jpeg: "jpegload_buffer"
        case .png: "pngload_buffer"
        case .webp: "webpload_buffer"
        case .gif: "gifload_buffer"
        case .tiff: "tiffload_buffer"
        case .avif, .heif: "heifload_buffer"
        case .jxl: "jxlload_buffer"
        case .svg: "svgload_buffer"
        case .pdf: "pdfload_buffer"
        case .bmp: "magickload_buffer"
        }
    }

    /// Formats whose loaders take `n` and `page` (several pages or frames per file).
    static func isMultiPage(_ format: ImageFormat) -> Bool {
        [.gif, .webp, .tiff, .avif, .heif, .pdf, .bmp].contains(format)
    }

    /// Recognises the format and refuses blocked loaders before libvips sees a byte.
    static func format(of bytes: [UInt8], settings: EngineSettings) throws(DeriveError) -> ImageFormat {
        guard let format = ImageSniffer.format(of: Array(bytes.prefix(4096))) else {
            throw DeriveError(.unsupportedFormat, bytes.isEmpty ? "the source is empty (0 bytes)"
                : "the source is not an image Derive recognises by its content (JPEG, PNG, WebP, GIF, AVIF, HEIF, JPEG XL, TIFF, SVG, PDF, BMP)")
        }
        if let loader = UntrustedLoader.required(for: format), !settings.allowedLoaders.contains(loader) {
            throw DeriveError(.blockedLoader, "\(format.rawValue) sources need libvips' \(loader.rawValue) loader, which is blocked by default as untrusted; allow it with DERIVE_ALLOW_LOADERS=\(loader.rawValue)")
        }
        return format
    }

    /// The header only: libvips reads no pixels until they are asked for.
    static func header(_ buffer: UnsafeRawBufferPointer, format: ImageFormat) throws(DeriveError) -> VImage {
        do {
            return try VipsCall(loader(for: format)).blob("buffer", buffer).enumeration("access", "sequential")
                .run(failing: .corruptImage).image("out")
        } catch {
            throw classify(error, stage: "read the header of")
        }
    }

    /// Decodes once at the plan's exact size, into memory, upright and in 8-bit sRGB:
    /// shrink-on-load (JPEG DCT scaling, WebP scaled decoding, SVG and PDF rendered at scale),
    /// one lanczos3 resample to the exact size (frame by frame for animations), the embedded
    /// ICC profile (CMYK included) converted to sRGB, then the EXIF orientation applied.
    static func decode(_ buffer: UnsafeRawBufferPointer, facts: SourceFacts, plan: DecodePlan) throws(DeriveError) -> (image: VImage, loaded: SourceInspection) {
        let target = facts.swapsAxes ? plan.size.swapped : plan.size
        let shrink = min(Double(facts.width) / Double(target.width), Double(facts.height) / Double(target.height))
        var call = VipsCall(loader(for: facts.format)).blob("buffer", buffer).enumeration("fail_on", "error")
            .enumeration("access", "sequential")
        switch facts.format {
        case .jpeg:
            // The largest DCT scale (1/2, 1/4, 1/8) whose image still covers the target, as
            // Pillow's draft() does: libjpeg's scaled IDCT filters as it shrinks, and the final
            // lanczos3 step does the rest.
            let factor = jpegShrink(facts.storedSize, target: target)
            if factor > 1 { call = call.int("shrink", factor) }
        case .webp:
            if shrink > 1 { call = call.double("scale", 1 / shrink) }
        case .svg, .pdf:
            call = call.double("scale", 1 / shrink)
        default:
            break
        }
        if isMultiPage(facts.format) {
            switch plan.pages {
            case .all: call = call.int("n", -1)
            case .page(let page): call = call.int("page", page - 1)
            }
        }
        do {
            let loaded = try call.run(failing: .decodeFailed).image("out")
            // The loader carries the colour space, profile and EXIF, so the header need not be
            // parsed twice.
            var metadata = inspection(of: loaded, format: facts.format)
            metadata.facts = facts
            var image = try sRGB(try resized(loaded, to: target)).removing(["orientation"])
            image = try image.inMemory()
            // Turned once into memory, so each output reads plain pixels instead of turning them
            // again; the unturned buffer is freed as soon as the turned one exists.
            if facts.orientation != 1 { image = try upright(image, orientation: facts.orientation).inMemory() }
            return (image, metadata)
        } catch {
            throw classify(error, stage: "decode")
        }
    }

    static func jpegShrink(_ size: Size, target: Size) -> Int {
        for factor in [8, 4, 2] {
            let width = (size.width + factor - 1) / factor
            let height = (size.height + factor - 1) / factor
            if width >= target.width && height >= target.height { return factor }
        }
        return 1
    }

    /// Resamples every frame to `target` (a strip of frames resized at once would blend
    /// neighbouring frames at their edges).
    static func resized(_ image: VImage, to target: Size) throws(DeriveError) -> VImage {
        guard image.pages > 1 else { return try image.resized(to: target) }
        let frames = try image.frames().map { (frame) throws(DeriveError) -> VImage in try frame.resized(to: target) }
        return try VImage.stacked(frames).withMetadata { pointer in Metadata.setInt(pointer, "page-height", target.height) }
    }

    /// 8-bit sRGB through the embedded profile (relative colorimetric, as libvips and browsers
    /// default to); CMYK without a profile goes through libvips' built-in CMYK profile. A
    /// profile that cannot be used falls back to a plain colour-space conversion.
    static func sRGB(_ image: VImage) throws(DeriveError) -> VImage {
        let space = image.interpretation
        let hasProfile = image.has("icc-profile-data")
        if hasProfile || space == "cmyk" {
            let transformed = try? VipsCall("icc_transform").image("in", image).string("output_profile", "srgb")
                .bool("embedded", true).string("input_profile", space == "cmyk" ? "cmyk" : "srgb")
                .enumeration("intent", "relative").int("depth", 8).run().image("out")
            if let transformed { return try transformed.standardised() }
            _ = VipsRuntime.takeError()
        }
        return try image.standardised()
    }

    /// Applies EXIF orientation 2–8 to the pixels.
    static func upright(_ image: VImage, orientation: Int) throws(DeriveError) -> VImage {
        switch orientation {
        case 2: try image.flipped(horizontal: true)
        case 3: try image.turned(quarters: 2)
        case 4: try image.flipped(horizontal: false)
        case 5: try image.turned(quarters: 1).flipped(horizontal: true)
        case 6: try image.turned(quarters: 1)
        case 7: try image.turned(quarters: 1).flipped(horizontal: false)
        case 8: try image.turned(quarters: 3)
        default: image
        }
    }

    /// Turns libvips' message into a classified error: damaged data is the source's fault and
    /// permanent; a blocked loader says how to allow it.
    static func classify(_ error: DeriveError, stage: String) -> DeriveError {
        let text = error.detail.lowercased()
        let damaged = ["truncated", "premature end", "corrupt", "unexpected end", "not enough data", "invalid",
                       "bad ", "error reading", "read error", "out of data", "incomplete", "no image", "unable to"]
        if text.contains("blocked") {
            return DeriveError(.blockedLoader, "could not \(stage) the source: \(error.detail)")
        }
        if damaged.contains(where: text.contains) {
            return DeriveError(.corruptImage, "could not \(stage) the source, which is truncated or damaged: \(error.detail)")
        }
        return DeriveError(error.code == .internalError ? .decodeFailed : error.code, "could not \(stage) the source: \(error.detail)")
    }

    /// Header facts and recorded metadata from a loaded header.
    static func inspection(of header: VImage, format: ImageFormat) -> SourceInspection {
        let pages = header.int("n-pages") ?? 1
        let facts = SourceFacts(format: format, width: header.width, height: pages > 1 ? header.pageHeight : header.height,
                                orientation: header.int("orientation") ?? 1, pages: pages, hasAlpha: header.hasAlpha)
        var exif: [String: String] = [:]
        let fields: [(String, [String])] = [
            ("takenAt", ["exif-ifd2-DateTimeOriginal", "exif-ifd0-DateTime"]),
            ("make", ["exif-ifd0-Make"]),
            ("model", ["exif-ifd0-Model"]),
            ("lens", ["exif-ifd2-LensModel"]),
            ("software", ["exif-ifd0-Software"]),
        ]
        for (key, names) in fields {
            if let value = names.lazy.compactMap({ header.string($0).flatMap(ExifText.value) }).first { exif[key] = value }
        }
        let hasLocation = header.fieldNames.contains { $0.hasPrefix("exif-ifd3-GPSLatitude") || $0.hasPrefix("exif-ifd3-GPSLongitude") }
        return SourceInspection(facts: facts, colourSpace: header.interpretation,
                                iccDescription: header.blob("icc-profile-data").flatMap(ICCProfile.description),
                                exif: exif, hasLocation: hasLocation)
    }
}
