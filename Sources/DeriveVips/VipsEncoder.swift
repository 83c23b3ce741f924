import DeriveLanguage

/// Encoders for every output format. The image arrives as 8-bit sRGB (or grey); formats
/// without alpha get it flattened onto white; `strip` drops EXIF, XMP, IPTC and the ICC
/// profile (the pixels are already sRGB, which is what a browser assumes without one).
enum VipsEncoder {
    struct Encoded {
        var data: [UInt8]
        var format: OutputFormat
        var quality: Int?
        var choices: [String]
        /// The SSIMULACRA 2 score reached, when `q_auto` measured it.
        var score: Double? = nil
        /// Encodes spent on this output (the `q_auto`/`f_auto` search included).
        var encodes: Int = 1
        /// After a search on a sample: the output's own score on the whole image, and whether
        /// it missed there and was searched again on the whole image (nil when the search ran
        /// on the whole image, or chose a lossless encoding).
        var verification: Verification?

        struct Verification {
            var score: Double
            var searchedAgain: Bool
        }
    }

    /// Encodes `input` as the settings say. `auto` quality and format are searched by the
    /// perceptual metric (`AutoEncoder`, starting from `hints` when a wider breakpoint of the
    /// same output was searched); everything else is one encode.
    static func encode(_ input: VImage, encoding: EncodingSettings, animated: Bool,
                       settings: EngineSettings = EngineSettings(), hints: [OutputFormat: Int] = [:]) throws(DeriveError) -> Encoded {
        var image = try input.standardised()
        if !animated && image.pages > 1 {
            image = try image.extracted(Rect(x: 0, y: 0, width: image.width, height: image.pageHeight))
        }
        if encoding.format == .auto || encoding.format == .original {
            return try AutoEncoder(settings: settings, hints: hints).chooseFormat(image, encoding: encoding, animated: animated)
        }
        // A CMYK output (cs_cmyk) is not searched: the metric and its fast JPEG paths compare
        // sRGB pixels, so q_auto takes the level's default quality, as JPEG 2000 does.
        if case .auto(let level)? = encoding.quality, !encoding.lossless, Self.scored.contains(encoding.format), !encoding.writesCMYK {
            return try AutoEncoder(settings: settings, hints: hints).search(image, encoding: encoding.resolved(to: encoding.format),
                                                              level: level, animated: animated)
        }
        let resolved = encoding.resolved(to: encoding.format)
        var quality: Int?
        if case .value(let q)? = resolved.quality { quality = q }
        if case .auto(let level)? = resolved.quality { quality = AutoDefaults.quality(level, for: resolved.format) }
        var choices: [String] = []
        let effort = settings.effort(for: resolved, format: resolved.format)
        if let note = effortNote(effort, format: resolved.format) { choices.append(note) }
        let data = try write(image, settings: resolved, quality: quality, effort: effort.effort, choices: &choices)
        return Encoded(data: data, format: resolved.format, quality: resolved.lossless ? nil : quality, choices: choices)
    }

    /// The image flattened onto white and converted to CMYK by libvips' built-in profile
    /// (relative colorimetric, libvips' colourspace), which the result carries.
    static func cmyk(_ image: VImage) throws(DeriveError) -> VImage {
        try image.flattened(on: .white).colourspace("cmyk")
    }

    /// Formats whose `q_auto` is searched by decoding and scoring candidates. BMP and ICO have
    /// no quality to choose; JPEG 2000 output would be decoded by a loader libvips marks
    /// untrusted, so it takes the level's default quality instead.
    static let scored: Set<OutputFormat> = [.jpeg, .png, .webp, .avif, .gif, .jxl, .tiff, .heic]

    /// The choices' line saying which effort an encode ran at and why, for the formats whose
    /// effort costs most (AVIF, WebP, JPEG XL).
    static func effortNote(_ effort: (effort: Int, source: EngineSettings.EffortSource), format: OutputFormat) -> String? {
        guard [.avif, .webp, .jxl].contains(format) else { return nil }
        let why = switch effort.source {
        case .output: "the output's effort"
        case .deployment: "DERIVE_\(format.rawValue.uppercased())_EFFORT"
        case .frontier: "\(format.rawValue)'s default"
        }
        return "effort \(effort.effort) (\(why))"
    }

    /// One encode at fixed settings (`settings.format` concrete, `quality` nil for the default)
    /// at `effort` (Derive's 0–9 scale; `EngineSettings.effort(for:format:)` chooses it, and
    /// without one the output's effort or Derive's default for the format).
    /// The image is 8-bit sRGB or grey, with its animation frames already chosen.
    static func write(_ input: VImage, settings resolved: EncodingSettings, quality: Int?, effort: Int? = nil,
                      choices: inout [String]) throws(DeriveError) -> [UInt8] {
        let format = resolved.format
        let effort = effort ?? EngineSettings().effort(for: resolved, format: format).effort
        var image = input
        if !format.supportsAlpha { image = try image.flattened(on: .white) }
        var strip = resolved.strip
        // fl_keep_attribution: every metadata field goes but the EXIF copyright and artist, and
        // the encoder writes what is left (libvips builds the EXIF block from those fields).
        if strip && resolved.keepAttribution {
            image = try image.keepingOnlyAttribution()
            strip = false
        } else if strip {
            // Stripped: no metadata field is left for an encoder to write. libvips' webpsave and
            // jxlsave (8.14) write an EXIF block from the fields they find even with strip set,
            // so a WebP kept the source's camera, GPS data and EXIF thumbnail; they still write
            // a bare one (orientation, resolution, size), which holds nothing of the source.
            image = try image.strippingMetadata()
        }
        // cs_cmyk, and cs_keep_cmyk on a CMYK source (the planner resolved which): the image,
        // flattened onto white, in CMYK through libvips' built-in profile (`cmyk`); the profile
        // goes with it, the only field left when the output is stripped.
        if resolved.writesCMYK {
            image = try Self.cmyk(image)
            if image.blob("icc-profile-data") == nil { throw DeriveError(.encodeFailed, "libvips wrote CMYK without its profile") }
            strip = false
        }
        // fl_strip_profile / cs_tinysrgb: the other metadata stays, the ICC profile goes.
        if resolved.stripProfile { image = try image.removing(["icc-profile-data"]) }
        // dn_: the resolution written in the file (libvips keeps pixels per millimetre; JPEG's
        // JFIF density, PNG's pHYs and TIFF's resolution tags carry it).
        if let dpi = resolved.density {
            image = try VipsCall("copy").image("in", image).double("xres", Double(dpi) / 25.4).double("yres", Double(dpi) / 25.4)
                .run().image("out")
        }
        // e_loop: how many times the animation plays (libvips' "loop", 0 for forever), which
        // gifsave and webpsave write.
        if let loop = resolved.loop {
            image = try image.withMetadata { pointer in Metadata.setInt(pointer, "loop", loop) }
        }
        // dl_: every frame's time in milliseconds (libvips' "delay", one per frame).
        if let delay = resolved.delay, image.pages > 1 {
            let frames = image.pages
            image = try image.withMetadata { pointer in Metadata.setInts(pointer, "delay", Array(repeating: delay, count: frames)) }
        }
        let chroma: String
        switch resolved.chromaSubsampling {
        case .auto: chroma = "auto"
        case .full: chroma = "off"
        case .half: chroma = "on"
        }

        var data: [UInt8]
        switch format {
        case .jpeg:
            // Huffman tables are always optimised. libvips' mozjpeg options (trellis quantisation
            // and friends) need a mozjpeg build; with Debian's libjpeg-turbo it only warns and
            // ignores them, so effort does not change JPEG output.
            data = try save(VipsCall("jpegsave_buffer").image("in", image).int("Q", quality ?? 80)
                .bool("interlace", resolved.progressive).bool("optimize_coding", true)
                .enumeration("subsample_mode", chroma).bool("strip", strip))
        case .png:
            if resolved.pngType != nil || resolved.lossy {
                data = try png(image, type: resolved.pngType, lossy: resolved.lossy, quality: quality ?? 100, effort: effort,
                               interlace: resolved.progressive, strip: strip, choices: &choices)
            } else {
                data = try png(image, quality: quality ?? 100, effort: effort, interlace: resolved.progressive, strip: strip, choices: &choices)
            }
        case .webp:
            data = try save(VipsCall("webpsave_buffer").image("in", image).int("Q", quality ?? 80)
                .bool("lossless", resolved.lossless).int("effort", min(6, Int((Double(effort) * 6 / 9).rounded())))
                .bool("strip", strip))
        case .avif:
            data = try save(VipsCall("heifsave_buffer").image("in", image).int("Q", quality ?? 50)
                .bool("lossless", resolved.lossless).enumeration("compression", "av1").int("effort", effort)
                .enumeration("subsample_mode", chroma).int("bitdepth", 8).bool("strip", strip))
        case .gif:
            // fl_lossy: pixels of a frame within a small error of the previous frame's are left
            // transparent (libvips' interframe_maxerror), so the frames compress better.
            data = try save(VipsCall("gifsave_buffer").image("in", image).int("effort", min(10, effort + 1))
                .bool("interlace", resolved.progressive).bool("strip", strip)
                .double("interframe_maxerror", resolved.lossy ? Self.lossyGIFError : 0))
        case .jxl:
            // libvips' jxlsave takes efforts 3–9 only (a lower one was ignored, with a GLib
            // warning, and libjxl ran at 7): 0–2 write 3, the fastest it offers.
            data = try save(VipsCall("jxlsave_buffer").image("in", image).int("Q", quality ?? 75)
                .bool("lossless", resolved.lossless).int("effort", min(9, max(3, effort))).bool("strip", strip))
        case .tiff:
            // Lossless deflate at quality 100 (the default); JPEG compression below it.
            // fl_tiff8_lzw: LZW instead of deflate (both lossless; the pixels are 8-bit already).
            let lossy = (quality ?? 100) < 100 && !image.hasAlpha && !resolved.tiffLZW
            var call = VipsCall("tiffsave_buffer").image("in", image).enumeration("compression", lossy ? "jpeg" : resolved.tiffLZW ? "lzw" : "deflate")
                .bool("strip", strip)
            if lossy { call = call.int("Q", quality ?? 75) }
            data = try save(call)
        case .jp2, .jpc:
            // A bare codestream has no box to say its components are YCbCr, so f_jpc is never
            // chroma-subsampled (libvips writes subsampled JPEG 2000 as YCbCr): RGB components,
            // which the codestream's own colour transform (MCT) compresses.
            data = try save(VipsCall("jp2ksave_buffer").image("in", image).int("Q", quality ?? 48)
                .bool("lossless", resolved.lossless).enumeration("subsample_mode", format == .jpc ? "off" : chroma).bool("strip", strip))
            // f_jpc: the codestream alone, as the JP2 file's contiguous codestream box holds it.
            if format == .jpc {
                guard let codestream = JPEG2000Boxes.codestream(of: data) else {
                    throw DeriveError(.encodeFailed, "libvips' JPEG 2000 file has no codestream box (jp2c) to write as jpc")
                }
                data = codestream
            }
        case .heic:
            data = try save(VipsCall("heifsave_buffer").image("in", image).int("Q", quality ?? 50)
                .bool("lossless", resolved.lossless).enumeration("compression", "hevc").int("effort", effort)
                .enumeration("subsample_mode", chroma).int("bitdepth", 8).bool("strip", strip))
        case .bmp:
            data = try save(VipsCall("magicksave_buffer").image("in", image).string("format", "bmp").bool("strip", strip))
        case .ico:
            guard let side = format.maxSide, image.width <= side, image.pageHeight <= side else {
                throw DeriveError(.unsupportedFormat, "an ICO holds images of at most 256x256, and this output is \(image.width)x\(image.pageHeight); resize it first (c_limit,w_256,h_256)")
            }
            data = try save(VipsCall("magicksave_buffer").image("in", image).string("format", "ico").bool("strip", strip))
        case .pdf, .ai:
            // The image as a JPEG (at the output's quality; 4:4:4 when asked) in a one-page PDF
            // whose page is its size at the output's density (ImagePDF).
            let jpeg = try save(VipsCall("jpegsave_buffer").image("in", image).int("Q", quality ?? 80)
                .bool("optimize_coding", true).enumeration("subsample_mode", chroma).bool("strip", true))
            data = ImagePDF.document(jpeg: jpeg, width: image.width, height: image.height, components: image.bands, dpi: resolved.density)
        case .svg:
            throw DeriveError(.internalError, "an svg output reached the raster encoders; e_vectorize traces it (VectorTracer)")
        case .auto, .original:
            throw DeriveError(.internalError, "format \(format.rawValue) reached the encoder unresolved")
        }
        return data
    }

    static func save(_ call: VipsCall) throws(DeriveError) -> [UInt8] {
        do {
            return try call.run(failing: .encodeFailed).blob("buffer")
        } catch {
            // Damaged source data often surfaces only here, when the pixels are finally read.
            throw VipsDecoder.classify(error, stage: "encode")
        }
    }

    /// The largest difference (of 255) fl_lossy lets a GIF frame's pixel keep the previous
    /// frame's colour: gifsicle's default lossiness is in this range.
    static let lossyGIFError = 8.0

    /// A PNG of the colour type `fl_png8`/`fl_png24`/`fl_png32` ask for, or (`fl_lossy` alone)
    /// a palette quantised at the output's quality: 80 when it is PNG's default of 100, as a
    /// lossy palette at 100 would keep every colour libimagequant can.
    static func png(_ input: VImage, type: PNGType?, lossy: Bool, quality: Int, effort: Int, interlace: Bool, strip: Bool,
                    choices: inout [String]) throws(DeriveError) -> [UInt8] {
        var image = input
        let call = VipsCall("pngsave_buffer").int("compression", effort).bool("interlace", interlace).bool("strip", strip)
        switch type {
        case .png24?:
            if image.hasAlpha { image = try image.flattened(on: .white) }
            choices.append("png24 (RGB, transparency flattened onto white)")
            return try save(call.image("in", image))
        case .png32?:
            if !image.hasAlpha { image = try image.withAlpha() }
            choices.append("png32 (RGBA)")
            return try save(call.image("in", image))
        case .png8?, nil:
            let q = lossy && quality == 100 ? 80 : quality
            choices.append(type == .png8 ? "png8 (palette at quality \(q))" : "png palette (fl_lossy, quality \(q))")
            return try save(call.image("in", image).bool("palette", true).int("Q", q).double("dither", q < 100 ? 1 : 0))
        }
    }

    /// Truecolour, or a palette when that is smaller: below quality 100 a lossy palette is
    /// allowed; at 100 only one that decodes to exactly the same pixels.
    static func png(_ image: VImage, quality: Int, effort: Int, interlace: Bool, strip: Bool,
                    choices: inout [String]) throws(DeriveError) -> [UInt8] {
        let truecolour = try save(VipsCall("pngsave_buffer").image("in", image).int("compression", effort)
            .bool("interlace", interlace).bool("strip", strip))
        let palette = try save(VipsCall("pngsave_buffer").image("in", image).int("compression", effort)
            .bool("interlace", interlace).bool("strip", strip).bool("palette", true).int("Q", quality)
            .double("dither", quality < 100 ? 1 : 0))
        guard palette.count < truecolour.count else { return truecolour }
        if quality < 100 {
            choices.append("png palette (smaller than truecolour at quality \(quality))")
            return palette
        }
        guard try decodesIdentically(palette, to: image) else { return truecolour }
        choices.append("png palette (lossless: the image has few colours)")
        return palette
    }

    static func decodesIdentically(_ png: [UInt8], to image: VImage) throws(DeriveError) -> Bool {
        try withBytes(png) { (buffer) throws(DeriveError) -> Bool in
            let decoded = try VipsCall("pngload_buffer").blob("buffer", buffer).run().image("out")
            guard decoded.size == image.size else { return false }
            // Premultiplied, so the invisible colour of fully transparent pixels does not count.
            func comparable(_ i: VImage) throws(DeriveError) -> VImage {
                try VipsCall("premultiply").image("in", i.hasAlpha ? i : try i.withAlpha()).run().image("out")
            }
            let a = try comparable(try image.matchingBands(for: decoded))
            let b = try comparable(try decoded.matchingBands(for: image))
            guard a.bands == b.bands else { return false }
            let difference = try VipsCall("subtract").image("left", a).image("right", b).run().image("out")
            let absolute = try VipsCall("abs").image("in", difference).run().image("out")
            let result = try VipsCall("max").image("in", absolute).run()
            // Premultiplying rounds; a difference below one step is the same 8-bit pixel.
            return result.doubleOutput("out") < 1
        }
    }
}
