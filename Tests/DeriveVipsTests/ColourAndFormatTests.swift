import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Testing

/// Colour management, animation, every encoder and metadata stripping, on real files.
@Suite struct ColourTests {
    /// Mean R, G, B of Pillow's conversion through LittleCMS (`icc`, relative colorimetric like
    /// libvips), or of a naive conversion
    /// that ignores the profile (`naive`), resized to w×h and flattened onto white.
    static let pillowReference = """
    import io, sys
    from PIL import Image, ImageCms, ImageStat
    path, w, h, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    im = Image.open(path)
    im.load()
    icc = im.info.get('icc_profile')
    if im.mode not in ('RGB', 'RGBA', 'CMYK', 'L'):
        im = im.convert('RGBA')
    if mode == 'icc' and icc:
        out = 'RGBA' if im.mode == 'RGBA' else 'RGB'
        im = ImageCms.profileToProfile(im, ImageCms.ImageCmsProfile(io.BytesIO(icc)), ImageCms.createProfile('sRGB'), renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC, outputMode=out)
    im = im.convert('RGBA')
    background = Image.new('RGBA', im.size, (255, 255, 255, 255))
    background.alpha_composite(im)
    im = background.convert('RGB').resize((w, h), Image.LANCZOS)
    print(' '.join('%.3f' % v for v in ImageStat.Stat(im).mean))
    """

    static func reference(_ fixture: String, _ size: Size, mode: String) throws -> [Double]? {
        guard Python.has("PIL") else { return nil }
        let run = try Python.run(pillowReference, arguments: [Paths.fixture(fixture).path, "\(size.width)", "\(size.height)", mode])
        return run.output.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// CMYK, Adobe RGB, Display P3 (16-bit) and grey sources come out as the colours an
    /// independent colour-managed conversion gives.
    @Test(arguments: ["formats/jpeg-cmyk-swop-icc.jpg", "formats/jpeg-icc-adobergb.jpg",
                      "formats/png-icc-displayp3-16bit.png", "formats/jpeg-grayscale-gray-icc.jpg"])
    func iccSourcesComeOutCorrectInSRGB(fixture: String) throws {
        let (_, result) = try Harness.render(fixture, "c_scale,w_64,h_48/b_white/f_png")
        let pixels = try Harness.pixels(result.outputs[0].data)
        #expect(pixels.bands == 3)
        guard let expected = try Self.reference(fixture, Size(64, 48), mode: "icc"), expected.count == 3 else {
            #expect(!Python.required, "the test script installs Pillow for this reference")
            return
        }
        for channel in 0..<3 {
            #expect(abs(Harness.mean(pixels, channel: channel) - expected[channel]) < 4, "\(fixture) channel \(channel)")
        }
    }

    /// The reference can tell: ignoring the CMYK profile gives visibly different colours.
    @Test func ignoringTheProfileWouldBeVisiblyWrong() throws {
        guard let managed = try Self.reference("formats/jpeg-cmyk-swop-icc.jpg", Size(64, 48), mode: "icc"),
              let naive = try Self.reference("formats/jpeg-cmyk-swop-icc.jpg", Size(64, 48), mode: "naive") else {
            #expect(!Python.required)
            return
        }
        #expect(zip(managed, naive).map { abs($0 - $1) }.max()! > 10)
    }

    @Test func sixteenBitSourcesBecomeEightBit() throws {
        let (_, result) = try Harness.render("formats/png-rgba16.png", "f_png")
        let (inspection, _) = try Harness.header(result.outputs[0].data)
        #expect(inspection.colorSpace == "srgb")
        #expect(result.outputs[0].metadata.hasAlpha)
    }
}

@Suite struct AnimationTests {
    static func delays(_ data: [UInt8]) throws -> [Int] {
        try Harness.header(data).1["delay"].map { $0.split(separator: " ").compactMap { Int($0) } } ?? []
    }

    @Test(arguments: [("formats/gif-animated-cogs.gif", "webp", 5), ("formats/gif-animated-cogs.gif", "gif", 5),
                      ("formats/webp-animated-9frames.webp", "webp", 9), ("formats/webp-animated-9frames.webp", "gif", 9)])
    func animationsKeepEveryFrameAndTheirDelays(fixture: String, format: String, frames: Int) throws {
        let source = try Harness.source(fixture)
        let sourceDelays = try Self.delays(source.bytes)
        let (plan, result) = try Harness.render(source, "c_fill,w_48,h_40/e_grayscale/f_\(format)")
        #expect(plan.outputs[0].keepsAnimation)
        let output = result.outputs[0]
        #expect(output.metadata.frames == frames)
        #expect(output.metadata.width == 48 && output.metadata.height == 40)
        let (inspection, _) = try Harness.header(output.data)
        #expect(inspection.facts.pages == frames && inspection.facts.width == 48 && inspection.facts.height == 40)
        let outputDelays = try Self.delays(output.data)
        #expect(outputDelays.count == frames)
        // A zero delay plays as 100 ms in browsers, and WebP stores it that way.
        for (a, b) in zip(sourceDelays, outputDelays) { #expect(a == b || (a == 0 && b <= 100), "\(sourceDelays) → \(outputDelays)") }
        #expect(try Harness.header(output.data).1["loop"] == Harness.header(source.bytes).1["loop"])
    }

    @Test func formatsThatCannotAnimateTakeTheFirstFrame() throws {
        let (plan, result) = try Harness.render("formats/gif-animated-cogs.gif", "w_40/f_png")
        #expect(!plan.outputs[0].keepsAnimation)
        #expect(result.outputs[0].metadata.frames == 1)
        #expect(try Harness.header(result.outputs[0].data).0.facts.pages == 1)
        let second = try Harness.render("formats/webp-animated-9frames.webp", "w_40/pg_2/f_png").1.outputs[0]
        #expect(try Harness.pixels(second.data).pixels != Harness.pixels(result.outputs[0].data).pixels)
    }
}

@Suite struct EncoderTests {
    /// Every output format decodes again to the same picture.
    @Test(arguments: [("jpeg", 8.0), ("png", 0.5), ("webp", 6.0), ("avif", 8.0), ("gif", 12.0), ("jxl", 6.0), ("tiff", 0.5)])
    func everyFormatRoundTripsThroughADecoder(format: String, tolerance: Double) throws {
        let reference = try Harness.pixels(Harness.render("photos/grace_hopper_noexif.jpg", "c_scale,w_96/f_png").1.outputs[0].data)
        let output = try Harness.render("photos/grace_hopper_noexif.jpg", "c_scale,w_96/f_\(format)").1.outputs[0]
        let expected = format == "jpeg" ? OutputFormat.jpeg : OutputFormat(rawValue: format)!
        #expect(output.metadata.format == expected)
        #expect(ImageSniffer.format(of: output.data)?.rawValue == (expected == .jpeg ? "jpeg" : expected.rawValue))
        let decoded = try Harness.pixels(output.data)
        #expect(decoded.width == 96 && decoded.height == 113)
        #expect(Harness.difference(decoded, reference) < tolerance, "\(format)")
    }

    @Test func settingsReachTheEncoders() throws {
        let small = try Harness.render("photos/jolla-phone.jpg", "c_scale,w_400/f_jpg,q_30").1.outputs[0]
        let large = try Harness.render("photos/jolla-phone.jpg", "c_scale,w_400/f_jpg,q_95").1.outputs[0]
        #expect(small.metadata.bytes * 2 < large.metadata.bytes)
        #expect(small.metadata.quality == 30)
        let lossless = try Harness.render("photos/grace_hopper_noexif.jpg", "c_scale,w_64/f_webp,fl_lossless").1.outputs[0]
        #expect(lossless.metadata.quality == nil)
        let progressive = try Harness.render("photos/grace_hopper_noexif.jpg", "c_scale,w_64/f_jpg,fl_progressive").1.outputs[0]
        #expect(progressive.data.contains(0xC2) && progressive.data.indices.contains { progressive.data[$0] == 0xFF && progressive.data[$0 + 1] == 0xC2 })
    }

    /// `f_auto,q_auto` are searched, not looked up (AutoQualityTests holds the measurements):
    /// the output says which format won and which quality met the level's target.
    @Test func autoFormatAndQualityAreChosenAndExplained() throws {
        let output = try Harness.render("photos/grace_hopper_noexif.jpg", "c_scale,w_64/f_auto,q_auto:eco").1.outputs[0]
        #expect([OutputFormat.avif, .webp, .jpeg].contains(output.metadata.format))
        #expect(output.metadata.choices.contains { $0.hasPrefix("format auto → \(output.metadata.format.rawValue)") })
        #expect(output.metadata.choices.contains { $0.hasPrefix("quality auto:eco → ") })
    }

    @Test func pngUsesAPaletteOnlyWhenItIsSmallerAndLossless() throws {
        let few = try Harness.render("formats/png-palette-trns.png", "f_png").1.outputs[0]
        #expect(few.metadata.choices.contains { $0.hasPrefix("png palette (lossless") })
        let photo = try Harness.render("photos/grace_hopper_noexif.jpg", "c_scale,w_64/f_png").1.outputs[0]
        #expect(photo.metadata.choices.isEmpty)
        let reduced = try Harness.render("photos/grace_hopper_noexif.jpg", "c_scale,w_64/f_png,q_60").1.outputs[0]
        #expect(reduced.metadata.bytes < photo.metadata.bytes)
    }
}

@Suite struct StripTests {
    /// Every format Derive writes metadata in drops it when stripped (a WebP kept the source's
    /// EXIF, GPS included, until the encoder removed the fields itself).
    @Test(arguments: ["f_jpg", "f_webp", "f_avif", "f_png", "f_tiff", "f_jxl"])
    func stripRemovesGPSAndCameraData(format: String) throws {
        let source = try Harness.source("photos/nikon-coolpix-p6000_gps.jpg")
        let (_, result) = try Harness.render(source, "c_scale,w_200/\(format)")
        #expect(result.source.inspection.hasLocation)
        #expect(result.source.inspection.exif["make"] == "NIKON")
        let stripped = result.outputs[0]
        let (inspection, fields) = try Harness.header(stripped.data)
        #expect(!inspection.hasLocation && inspection.exif.isEmpty, "\(inspection.exif)")
        // A JPEG XL always carries its colour encoding, which libvips reads back as a profile.
        #expect(!fields.keys.contains { ($0 == "icc-profile-data" && format != "f_jxl") || $0 == "xmp-data" || $0 == "jpeg-thumbnail-data" || $0.hasPrefix("exif-ifd3") },
                "\(fields.keys.sorted())")
        let personal = fields.keys.filter { key in ["Make", "Model", "DateTime", "MakerNote", "Software", "DateTimeOriginal"].contains { key.hasSuffix("-" + $0) } }
        #expect(personal.isEmpty, "\(fields.keys.sorted())")
        // JPEG, PNG, AVIF and TIFF write no EXIF block at all; libvips' WebP and JPEG XL savers
        // write a bare one (orientation, resolution, size) whatever they are told.
        if !["f_webp", "f_jxl"].contains(format) {
            #expect(!fields.keys.contains { $0.hasPrefix("exif-") }, "\(fields.keys.sorted())")
            #expect(!stripped.data.indices.dropLast(3).contains { stripped.data[$0] == 0x45 && stripped.data[$0 + 1] == 0x78 && stripped.data[$0 + 2] == 0x69 && stripped.data[$0 + 3] == 0x66 })
        }
        #expect(!stripped.data.indices.dropLast(3).contains { stripped.data[$0] == 0x4E && stripped.data[$0 + 1] == 0x49 && stripped.data[$0 + 2] == 0x4B && stripped.data[$0 + 3] == 0x4F },
                "the camera's make (NIKON) is gone from the bytes")
        // Keeping metadata keeps the GPS, which shows the check above can fail.
        let kept = try Harness.render(source, "c_scale,w_200/f_jpg,fl_keep_iptc").1.outputs[0]
        #expect(try Harness.header(kept.data).0.hasLocation)
    }

    /// fl_keep_attribution keeps the EXIF copyright (the concert photograph's "Marsel Minga")
    /// and nothing else: no ICC profile, no XMP; on the camera's photograph no make, no GPS.
    @Test(arguments: ["f_jpg", "f_webp"])
    func keepAttributionKeepsTheCopyrightAlone(format: String) throws {
        let credited = try Harness.render("formats/jpeg-grayscale-gray-icc.jpg", "c_scale,w_120/\(format),fl_keep_attribution").1.outputs[0]
        let (_, fields) = try Harness.header(credited.data)
        // Exactly the source's tag (libvips' display-string rebuild once made it "Marsel Minga
        // (Marsel Minga (Photographer) - [None]"), read from the output's own EXIF block.
        #expect(try AttributionTests.exifBlock(credited.data).flatMap { ExifAttribution(exif: $0) }?.copyright == Array("Marsel Minga\0".utf8), "\(fields)")
        #expect(fields["icc-profile-data"] == nil && fields["xmp-data"] == nil, "\(fields.keys.sorted())")
        // Stripped without the flag: no copyright, which shows the check above can fail.
        let stripped = try Harness.render("formats/jpeg-grayscale-gray-icc.jpg", "c_scale,w_120/\(format)").1.outputs[0]
        #expect(try Harness.header(stripped.data).1["exif-ifd0-Copyright"] == nil)
        let camera = try Harness.render("photos/nikon-coolpix-p6000_gps.jpg", "c_scale,w_200/\(format),fl_keep_attribution").1.outputs[0]
        let (inspection, cameraFields) = try Harness.header(camera.data)
        #expect(!inspection.hasLocation && inspection.exif["make"] == nil, "\(cameraFields.keys.sorted())")
        // What is left is what libexif writes in any new block (resolution, dimensions, versions):
        // nothing of the camera, the time or the place.
        let personal = cameraFields.keys.filter { key in
            key.hasPrefix("exif-ifd3") || key == "xmp-data" || ["Make", "Model", "DateTime", "MakerNote", "Software"].contains { key.hasSuffix("-" + $0) }
        }
        #expect(personal.isEmpty, "\(cameraFields.keys.sorted())")
        #expect(try Harness.header(try Harness.render("photos/nikon-coolpix-p6000_gps.jpg", "c_scale,w_200/\(format),fl_keep_iptc").1.outputs[0].data).0.hasLocation,
                "keeping everything keeps the GPS, which shows the check above can fail")
    }

    @Test func keptMetadataDoesNotTurnUprightPixelsAgain() throws {
        let kept = try Harness.render("photos/canon-sx60hs_orient6.jpg", "c_scale,w_150/f_jpg,fl_keep_iptc").1.outputs[0]
        let (inspection, _) = try Harness.header(kept.data)
        #expect(inspection.facts.orientation == 1)
        #expect(inspection.facts.width == 150 && inspection.facts.height == 200)
        #expect(inspection.exif["make"] != nil)
    }
}

/// fl_strip_profile and cs_tinysrgb keep the other metadata and drop the ICC profile; cs_srgb and
/// cs_no_cmyk ask for what Derive always makes (sRGB pixels, a CMYK source converted).
@Suite struct ColourSpaceSettingTests {
    @Test(arguments: ["formats/jpeg-icc-adobergb.jpg", "formats/jpeg-cmyk-swop-icc.jpg"])
    func stripProfileKeepsTheOtherMetadata(fixture: String) throws {
        let kept = try Harness.render(fixture, "c_scale,w_120/f_jpg,fl_keep_iptc").1.outputs[0]
        let keptFields = try Harness.header(kept.data).1
        #expect(keptFields["icc-profile-data"] != nil, "kept metadata carries the sRGB profile, which shows the check below can fail")
        for chain in ["c_scale,w_120/f_jpg,fl_keep_iptc.strip_profile", "c_scale,w_120/f_jpg,fl_keep_iptc,cs_tinysrgb"] {
            let output = try Harness.render(fixture, chain).1.outputs[0]
            let (inspection, fields) = try Harness.header(output.data)
            #expect(fields["icc-profile-data"] == nil, "\(chain)")
            #expect(fields.keys.contains { $0.hasPrefix("exif-") } == keptFields.keys.contains { $0.hasPrefix("exif-") }, "\(chain)")
            #expect(inspection.facts.width == 120)
            // The same pixels as with the profile: only the metadata differs.
            #expect(Harness.difference(try Harness.pixels(output.data), try Harness.pixels(kept.data)) < 0.5, "\(chain)")
        }
    }

    /// cs_srgb and cs_no_cmyk change nothing Derive writes: the CMYK photograph comes out sRGB,
    /// byte for byte as without them.
    @Test(arguments: ["cs_srgb", "cs_no_cmyk"])
    func srgbAndNoCmykAreWhatDeriveMakes(setting: String) throws {
        let plain = try Harness.render("formats/jpeg-cmyk-swop-icc.jpg", "c_scale,w_120/f_jpg").1.outputs[0]
        let asked = try Harness.render("formats/jpeg-cmyk-swop-icc.jpg", "c_scale,w_120/f_jpg,\(setting)").1.outputs[0]
        #expect(asked.data == plain.data)
        #expect(try Harness.pixels(asked.data).bands == 3)
    }
}
