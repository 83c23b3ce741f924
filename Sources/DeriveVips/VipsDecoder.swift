internal import CVips
import Foundation
internal import CVipsShim
import DeriveLanguage

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
        case .svg, .svgz: "svgload_buffer"
        case .pdf: "pdfload_buffer"
        case .jp2: "jp2kload_buffer"
        case .pnm: "ppmload_source"
        case .hdr: "radload_buffer"
        // libvips reads OpenEXR from files only.
        case .exr: "openexrload"
        case .bmp, .ico, .tga, .psd: "magickload_buffer"
        }
    }

    /// Formats whose loaders take `n` and `page` (several pages or frames per file).
    static func isMultiPage(_ format: ImageFormat) -> Bool {
        [.gif, .webp, .tiff, .avif, .heif, .pdf, .bmp].contains(format)
    }

    /// High dynamic range formats: linear light, tone-mapped to sRGB on decode.
    static func isHighDynamicRange(_ format: ImageFormat) -> Bool { format == .hdr || format == .exr }

    /// The loader for `format` with the source attached the way it takes it: a buffer, a memory
    /// source (Netpbm), a scratch file (OpenEXR), or the inflated SVG of an SVGZ (at most
    /// `inflateLimit` bytes). The scratch file must be kept until the image is decoded.
    static func loaderCall(_ buffer: UnsafeRawBufferPointer, format: ImageFormat,
                           inflateLimit: Int) throws(DeriveError) -> (call: VipsCall, scratch: ScratchFile?) {
        let name = loader(for: format)
        switch format {
        case .pnm:
            return (VipsCall(name).memorySource("source", buffer), nil)
        case .exr:
            let scratch = try ScratchFile(buffer, suffix: ".exr")
            return (VipsCall(name).string("filename", scratch.path), scratch)
        case .svgz:
            var length = 0
            var status: Int32 = 0
            guard let inflated = dvips_gunzip(buffer.baseAddress, buffer.count, inflateLimit, &length, &status) else {
                if status == -2 {
                    throw DeriveError(.limitExceeded, "the SVGZ source inflates to more than \(inflateLimit) bytes, the input limit (DERIVE_MAX_INPUT_BYTES)")
                }
                throw DeriveError(.corruptImage, "the SVGZ source is truncated or damaged: its gzip stream does not inflate")
            }
            let head = [UInt8](UnsafeRawBufferPointer(start: inflated, count: min(length, 1024)))
            guard ImageSniffer.format(of: head) == .svg else {
                g_free(inflated)
                throw DeriveError(.unsupportedFormat, "the source is gzip-compressed but holds no SVG; Derive reads gzip only as SVGZ")
            }
            return (VipsCall(name).ownedBlob("buffer", inflated, count: length), nil)
        case .ico:
            // An icon holds one image per size: read the largest.
            let largest = ImageSniffer.icoLargest([UInt8](buffer.prefix(6 + 16 * 256)))?.index ?? 0
            return (VipsCall(name).blob("buffer", buffer).int("page", largest), nil)
        default:
            return (VipsCall(name).blob("buffer", buffer), nil)
        }
    }

    /// Recognises the format and refuses blocked loaders before libvips sees a byte.
    static func format(of bytes: [UInt8], settings: EngineSettings) throws(DeriveError) -> ImageFormat {
        guard let format = ImageSniffer.format(of: Array(bytes.prefix(4096))) else {
            throw DeriveError(.unsupportedFormat, bytes.isEmpty ? "the source is empty (0 bytes)"
                : "the source is not an image Derive recognises by its content (JPEG, PNG, WebP, GIF, AVIF, HEIF, JPEG XL, TIFF, SVG, SVGZ, PDF, BMP, JPEG 2000, Netpbm, Radiance HDR, OpenEXR, ICO, TGA, PSD)")
        }
        if let loader = UntrustedLoader.required(for: format), !settings.allowedLoaders.contains(loader) {
            throw DeriveError(.blockedLoader, "\(format.rawValue) sources need libvips' \(loader.rawValue) loader, which is blocked by default as untrusted; allow it with DERIVE_ALLOW_LOADERS=\(loader.rawValue)")
        }
        return format
    }

    /// The header only: libvips reads no pixels until they are asked for.
    static func header(_ buffer: UnsafeRawBufferPointer, format: ImageFormat,
                       inflateLimit: Int = SourceLimits.default.maxInputBytes) throws(DeriveError) -> VImage {
        // Derive's own refusals (an SVGZ that does not inflate) are already classified.
        let (call, scratch) = try loaderCall(buffer, format: format, inflateLimit: inflateLimit)
        defer { withExtendedLifetime(scratch) {} }
        do {
            return try call.enumeration("access", "sequential").run(failing: .corruptImage).image("out")
        } catch {
            throw classify(error, stage: "read the header of")
        }
    }

    /// Decodes once at the plan's exact size (only its region, when it has one), into memory,
    /// upright and in 8-bit sRGB:
    /// shrink-on-load (JPEG DCT scaling, WebP scaled decoding, SVG and PDF rendered at scale),
    /// one lanczos3 resample to the exact size (frame by frame for animations), the embedded
    /// ICC profile (CMYK included) converted to sRGB, then the EXIF orientation applied.
    /// `streamed`: an upright source is not kept in memory; its pixels are decoded as whoever
    /// reads the image asks for them, top to bottom, and not kept (the detector's first look at
    /// a job whose crops depend on its faces: `VipsEngine.render`).
    static func decode(_ buffer: UnsafeRawBufferPointer, facts: SourceFacts, plan: DecodePlan,
                       inflateLimit: Int, streamed: Bool = false) throws(DeriveError) -> (image: VImage, loaded: SourceInspection) {
        let target = facts.swapsAxes ? plan.size.swapped : plan.size
        let shrink = min(Double(facts.width) / Double(target.width), Double(facts.height) / Double(target.height))
        let (loaderCall, scratch) = try loaderCall(buffer, format: facts.format, inflateLimit: inflateLimit)
        // The scratch file is read until the image is in memory, at the end of this function.
        defer { withExtendedLifetime(scratch) {} }
        var call = loaderCall.enumeration("fail_on", "error").enumeration("access", "sequential")
        switch facts.format {
        case .jpeg:
            // The largest DCT scale (1/2, 1/4, 1/8) whose image still covers the target, as
            // Pillow's draft() does: libjpeg's scaled IDCT filters as it shrinks, and the final
            // lanczos3 step does the rest.
            let factor = jpegShrink(facts.storedSize, target: target)
            if factor > 1 { call = call.int("shrink", factor) }
        case .webp:
            if shrink > 1 { call = call.double("scale", 1 / shrink) }
        case .svg, .svgz, .pdf:
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
            var image: VImage
            if isHighDynamicRange(facts.format) {
                // Resampled in linear light, then tone-mapped at the size decoded.
                let linear = loaded.isRadianceCoded ? try VipsCall("rad2float").image("in", loaded).run().image("out") : loaded
                image = try sRGB(try toneMapped(try resized(linear, to: target), keepAlpha: facts.hasAlpha))
            } else {
                image = try sRGB(try resized(loaded, to: target))
            }
            if let region = plan.region {
                // Only the part the outputs cut: libvips computes the resample and the colour
                // of these pixels alone (the same pixels as the whole decode has there), and the
                // loader reads no further down the file than the part's last row.
                image = try image.extracted(FaceGeometry.stored(region, orientation: facts.orientation, upright: plan.size))
            }
            image = try image.removing(["orientation"])
            if streamed && facts.orientation == 1 && scratch == nil { return (image, metadata) }
            image = try image.inMemory()
            // Turned once into memory, so each output reads plain pixels instead of turning them
            // again; the unturned buffer is freed as soon as the turned one exists.
            if facts.orientation != 1 { image = try upright(image, orientation: facts.orientation).inMemory() }
            return (image, metadata)
        } catch {
            throw classify(error, stage: "decode")
        }
    }

    /// Linear-light HDR pixels (Radiance, OpenEXR) into the 0–1 range sRGB holds, by the
    /// extended Reinhard curve per channel, `c * (1 + c / w²) / (1 + c)`, with the white point
    /// `w` the brightest channel value (at least 1): the brightest value maps to 1, and an image
    /// already within 0–1 is left as it is. Negative values (out of gamut) become 0. Alpha is kept
    /// when the file has it (libvips gives every OpenEXR an alpha band).
    /// The image is the decode, already at its output size.
    static func toneMapped(_ image: VImage, keepAlpha: Bool = true) throws(DeriveError) -> VImage {
        // Read twice (its maximum, then the curve): into memory once.
        let linear = try image.inMemory()
        let alpha = keepAlpha ? try linear.alphaBand() : nil
        var colour = try linear.withoutAlpha().cast("float")
        colour = try colour.clampedAtZero()
        let white = max(1, try VipsCall("max").image("in", colour).run().doubleOutput("out"))
        let numerator = try VipsCall("multiply").image("left", colour)
            .image("right", colour.linear([1 / (white * white)], [1], uchar: false)).run().image("out")
        var mapped = try VipsCall("divide").image("left", numerator).image("right", colour.linear([1], [1], uchar: false))
            .run().image("out")
        if let alpha { mapped = try mapped.joined(with: alpha.cast("float")) }
        return try VipsCall("copy").image("in", mapped).enumeration("interpretation", "scrgb").run().image("out")
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
        // ICO, PSD and the other single-image formats report their sizes or layers as pages;
        // Derive reads one of them.
        let pages = isMultiPage(format) ? header.int("n-pages") ?? 1 : 1
        var facts = SourceFacts(format: format, width: header.width, height: pages > 1 ? header.pageHeight : header.height,
                                orientation: header.int("orientation") ?? 1, pages: pages, hasAlpha: header.hasAlpha)
        facts.isCMYK = header.interpretation == "cmyk"
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
        return SourceInspection(facts: facts, colorSpace: header.interpretation,
                                iccDescription: header.blob("icc-profile-data").flatMap(ICCProfile.description),
                                exif: exif, hasLocation: hasLocation)
    }
}

/// A private temporary copy of a source, for the loaders that read files only; removed when
/// the last reference goes.
final class ScratchFile {
    let path: String

    init(_ bytes: UnsafeRawBufferPointer, suffix: String) throws(DeriveError) {
        var template = Array((NSTemporaryDirectory() + "/derive-source-XXXXXX" + suffix).utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, Int32(suffix.utf8.count)) }
        guard descriptor >= 0 else {
            throw DeriveError(.internalError, "could not create a scratch file for the source in \(NSTemporaryDirectory()): \(String(cString: strerror(errno)))")
        }
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { close(descriptor) }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 {
                unlink(path)
                throw DeriveError(.internalError, "could not write a scratch file for the source at \(path): \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    deinit { unlink(path) }
}
