import DeriveLanguage
import DeriveTestSupport
@testable import DeriveVips
import Foundation
import Testing

/// fl_keep_attribution keeps the EXIF Copyright and Artist byte for byte, and nothing else of
/// the source: no description, camera, GPS, XMP, IPTC or comment reaches the output's bytes.
@Suite struct AttributionTests {
    static let copyright = "(c) 2026 Marsel Minga (CC BY 4.0)"
    static let artist = "Ada Lovelace (Studio)"
    /// Strings of the source that must not reach any output.
    static let secrets = ["SECRETDESCRIPTION", "SECRETMAKE", "SECRETDATUM", "SECRETXMP", "SECRETIPTC", "SECRETCOMMENT"]

    /// A little-endian EXIF block: IFD0 with ImageDescription, Make, Artist, Copyright and a GPS
    /// pointer; the GPS IFD with a latitude reference and a map datum.
    static func sourceExif(copyright: [UInt8], artist: [UInt8]) -> [UInt8] {
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        let ifd0: [(Int, [UInt8])] = [(0x010E, Array("SECRETDESCRIPTION\0".utf8)), (0x010F, Array("SECRETMAKE\0".utf8)),
                                      (0x013B, artist), (0x8298, copyright)]
        let gps: [(Int, [UInt8])] = [(0x0001, Array("N\0".utf8)), (0x0012, Array("SECRETDATUM\0".utf8))]
        let ifd0Size = 2 + (ifd0.count + 1) * 12 + 4
        let gpsAt = 8 + ifd0Size
        let gpsSize = 2 + gps.count * 12 + 4
        var data: [UInt8] = []
        let dataAt = gpsAt + gpsSize
        func entries(_ list: [(Int, [UInt8])]) -> [UInt8] {
            var out: [UInt8] = []
            for (tag, value) in list {
                out += le16(tag) + le16(2) + le32(value.count)
                if value.count <= 4 {
                    out += value + [UInt8](repeating: 0, count: 4 - value.count)
                } else {
                    out += le32(dataAt + data.count)
                    data += value
                    if data.count % 2 == 1 { data.append(0) }
                }
            }
            return out
        }
        tiff += le16(ifd0.count + 1) + entries(ifd0) + le16(0x8825) + le16(4) + le32(1) + le32(gpsAt) + le32(0)
        tiff += le16(gps.count) + entries(gps) + le32(0)
        return [0x45, 0x78, 0x69, 0x66, 0, 0] + tiff + data
    }

    static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// A JPEG with that EXIF block, an XMP packet, IPTC (in a Photoshop block) and a comment.
    static func source(copyright: String = copyright, artist: String = artist) throws -> SourceImage {
        let plain = try Harness.render("formats/jpeg-grayscale-gray-icc.jpg", "c_scale,w_160/f_jpg").1.outputs[0].data
        #expect(plain.starts(with: [0xFF, 0xD8]))
        let exif = sourceExif(copyright: Array(copyright.utf8) + [0], artist: Array(artist.utf8) + [0])
        let xmp = Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description xmlns:dc=\"http://purl.org/dc/elements/1.1/\" dc:source=\"SECRETXMP\"/></rdf:RDF></x:xmpmeta>".utf8)
        // Photoshop 3.0 image resource 0x0404 (IPTC), one dataset 2:120 (caption).
        let caption = Array("SECRETIPTC".utf8)
        let iptc: [UInt8] = [0x1C, 2, 120, 0, UInt8(caption.count)] + caption
        var resource: [UInt8] = Array("8BIM".utf8) + [0x04, 0x04, 0, 0, 0, 0, 0, UInt8(iptc.count)] + iptc
        if resource.count % 2 == 1 { resource.append(0) }
        let photoshop = Array("Photoshop 3.0\0".utf8) + resource
        let spliced = [0xFF, 0xD8] + segment(0xE1, exif) + segment(0xE1, xmp) + segment(0xED, photoshop)
            + segment(0xFE, Array("SECRETCOMMENT".utf8)) + plain.dropFirst(2)
        return SourceImage(bytes: spliced, location: "attributed.jpg")
    }

    /// The output's EXIF block as libvips reads it back (nil when it has none).
    static func exifBlock(_ data: [UInt8]) throws -> [UInt8]? {
        let format = try #require(ImageSniffer.format(of: data))
        return try withBytes(data) { (buffer) throws(DeriveError) -> [UInt8]? in
            try VipsDecoder.header(buffer, format: format).blob("exif-data")
        }
    }

    static func contains(_ data: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard data.count >= needle.count else { return false }
        return (0...(data.count - needle.count)).contains { i in data[i] == needle[0] && Array(data[i..<i + needle.count]) == needle }
    }

    /// Pillow's reading of the output's EXIF IFD0 Copyright and Artist, as "copyright\nartist".
    static func pillowAttribution(_ data: [UInt8]) throws -> String? {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("attribution-\(UUID().uuidString)")
        try Data(data).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let script = "import sys\nfrom PIL import Image\nexif = Image.open(sys.argv[1]).getexif()\nprint(exif.get(0x8298, '<none>') + '\\n' + exif.get(0x013B, '<none>'), end='')"
        guard let run = try? Python.run(script, arguments: [url.path]), run.status == 0 else { return nil }
        return run.output
    }

    @Test func sourceCarriesEverySecret() throws {
        let source = try Self.source()
        for secret in Self.secrets { #expect(Self.contains(source.bytes, secret), "\(secret)") }
        let kept = try Harness.render(source, "c_scale,w_120/f_jpg,fl_keep_iptc").1.outputs[0].data
        // Keeping everything keeps the description and the camera, which shows the checks below can fail.
        #expect(Self.contains(kept, "SECRETDESCRIPTION") && Self.contains(kept, "SECRETMAKE"))
    }

    /// The formats whose libvips 8.14 saver writes an EXIF block: the tags come back exactly.
    @Test(arguments: ["f_jpg", "f_webp", "f_avif", "f_png", "f_heic"])
    func keepsCopyrightAndArtistExactly(format: String) throws {
        let source = try Self.source()
        let output = try Harness.render(source, "c_scale,w_120/\(format),fl_keep_attribution").1.outputs[0].data
        let block = try #require(try Self.exifBlock(output), "\(format) has no EXIF block")
        let read = try #require(ExifAttribution(exif: block))
        #expect(read.copyright == Array(Self.copyright.utf8) + [0], "\(read.copyrightText ?? "nil")")
        #expect(read.artist == Array(Self.artist.utf8) + [0], "\(read.artistText ?? "nil")")
        if format != "f_heic", let pillow = try Self.pillowAttribution(output) {
            #expect(pillow == Self.copyright + "\n" + Self.artist)
        }
        for secret in Self.secrets { #expect(!Self.contains(output, secret), "\(format): \(secret) leaked") }
        let (inspection, fields) = try Harness.header(output)
        #expect(!inspection.hasLocation)
        #expect(!fields.keys.contains { $0.hasPrefix("exif-ifd3") || $0 == "xmp-data" || $0 == "iptc-data" || $0 == "icc-profile-data" || $0 == "image-description" },
                "\(fields.keys.sorted())")
        // Stripped without the flag: no copyright, which shows the check above can fail.
        let stripped = try Harness.render(source, "c_scale,w_120/\(format)").1.outputs[0].data
        #expect(try Self.exifBlock(stripped).flatMap { ExifAttribution(exif: $0) } == nil)
    }

    /// A copyright that is not plain ASCII (UTF-8 bytes, as cameras write) comes back byte for
    /// byte; libvips' own rebuild would have turned it into ASCII.
    @Test func keepsNonASCIIBytes() throws {
        let source = try Self.source(copyright: "© 2026 Zoë Müller (Photographer)", artist: "Zoë")
        let output = try Harness.render(source, "c_scale,w_120/f_jpg,fl_keep_attribution").1.outputs[0].data
        let read = try #require(try Self.exifBlock(output).flatMap { ExifAttribution(exif: $0) })
        #expect(read.copyright == Array("© 2026 Zoë Müller (Photographer)".utf8) + [0])
        #expect(read.artist == Array("Zoë".utf8) + [0])
    }

    /// GIF, TIFF, JPEG XL, JPEG 2000, BMP and ICO outputs carry no attribution: their libvips
    /// 8.14 savers write no EXIF block (and tiffsave no TIFF Copyright or Artist tag). They carry
    /// nothing else of the source either. Docs/engine.md lists the formats; this keeps it true.
    @Test(arguments: ["f_gif", "f_tiff", "f_jxl", "f_jp2", "f_bmp", "f_ico"])
    func formatsWithoutEXIFKeepNothing(format: String) throws {
        let output = try Harness.render(try Self.source(), "c_scale,w_120/\(format),fl_keep_attribution").1.outputs[0].data
        for secret in Self.secrets { #expect(!Self.contains(output, secret), "\(format): \(secret) leaked") }
        #expect(!Self.contains(output, "Marsel Minga") && !Self.contains(output, "Ada Lovelace"), "\(format) now carries the attribution: update Docs/engine.md")
        #expect(try Self.exifBlock(output) == nil)
        let fields = try Harness.header(output).1
        #expect(fields["image-description"] == nil, "\(fields.keys.sorted())")
    }

    /// An 8x8 grey, uncompressed TIFF whose ImageDescription (tag 270) holds a secret.
    static func describedTIFF() -> SourceImage {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16) }
        let description = Array("SECRETDESCRIPTION\0".utf8)
        let count = 9
        let descriptionAt = 8 + 2 + count * 12 + 4
        let pixelsAt = descriptionAt + description.count + description.count % 2
        let entries: [(Int, Int, Int)] = [(256, 3, 8), (257, 3, 8), (258, 3, 8), (259, 3, 1), (262, 3, 1), (273, 4, pixelsAt), (277, 3, 1), (278, 3, 8), (279, 4, 64)]
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + le32(8) + le16(count)
        for (tag, type, value) in entries.prefix(5) { tiff += le16(tag) + le16(type) + le32(1) + (type == 3 ? le16(value) + [0, 0] : le32(value)) }
        tiff += le16(270) + le16(2) + le32(description.count) + le32(descriptionAt)
        for (tag, type, value) in entries.dropFirst(5).prefix(3) { tiff += le16(tag) + le16(type) + le32(1) + (type == 3 ? le16(value) + [0, 0] : le32(value)) }
        tiff += le32(0)
        tiff += description + [UInt8](repeating: 0, count: description.count % 2)
        tiff += (0..<64).map { UInt8($0 * 4) }
        return SourceImage(bytes: tiff, location: "described.tif")
    }

    /// A TIFF source's ImageDescription reached a TIFF output (tiffsave writes the field when
    /// not stripping); it is gone with fl_keep_attribution, in every format.
    @Test(arguments: ["f_tiff", "f_png", "f_jpg", "f_webp"])
    func descriptionDoesNotLeak(format: String) throws {
        let source = Self.describedTIFF()
        #expect(try Harness.header(source.bytes).1["image-description"] == "SECRETDESCRIPTION", "the source carries it")
        let output = try Harness.render(source, "c_scale,w_6/\(format),fl_keep_attribution").1.outputs[0].data
        #expect(!Self.contains(output, "SECRETDESCRIPTION"), "\(format)")
        #expect(try Harness.header(output).1["image-description"] == nil)
        if format == "f_tiff" {
            let kept = try Harness.render(source, "c_scale,w_6/f_tiff,fl_keep_iptc").1.outputs[0].data
            #expect(Self.contains(kept, "SECRETDESCRIPTION"), "keeping metadata keeps it, which shows the check above can fail")
        }
    }

    /// The concert photograph's real EXIF: libvips used to write its copyright back as
    /// "Marsel Minga (Marsel Minga (Photographer) - [None]".
    @Test(arguments: ["f_jpg", "f_webp", "f_avif"])
    func concertPhotographKeepsItsCopyright(format: String) throws {
        let output = try Harness.render("formats/jpeg-grayscale-gray-icc.jpg", "c_scale,w_120/\(format),fl_keep_attribution").1.outputs[0].data
        let read = try #require(try Self.exifBlock(output).flatMap { ExifAttribution(exif: $0) })
        #expect(read.copyrightText == "Marsel Minga")
        let fields = try Harness.header(output).1
        // libvips' field is its rendering of the tag: the value, then libexif's display string
        // (which libexif may translate) and the tag's size: 13 bytes, "Marsel Minga" and its NUL.
        #expect(fields["exif-ifd0-Copyright"]?.hasPrefix("Marsel Minga (") == true, "\(fields["exif-ifd0-Copyright"] ?? "nil")")
        #expect(fields["exif-ifd0-Copyright"]?.hasSuffix(", ASCII, 13 components, 13 bytes)") == true, "\(fields["exif-ifd0-Copyright"] ?? "nil")")
    }
}
