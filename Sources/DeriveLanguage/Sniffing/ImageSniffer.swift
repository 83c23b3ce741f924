/// Recognises image formats by their magic bytes and reads header facts (size, EXIF
/// orientation, frames, alpha) without decoding pixels. Every read is bounds-checked: a
/// truncated or hostile header yields nil or partial facts, never a trap.
///
/// The engine reads facts through libvips; this exists so that `derive explain` works without
/// it, and so fetchers can trust content rather than file names or `Content-Type`.
public enum ImageSniffer {
    /// The format the bytes start like, or nil.
    public static func format(of bytes: [UInt8]) -> ImageFormat? {
        let b = Bytes(bytes)
        if b.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if b.starts(with: Array("GIF87a".utf8)) || b.starts(with: Array("GIF89a".utf8)) { return .gif }
        if b.starts(with: Array("RIFF".utf8)) && b.matches(Array("WEBP".utf8), at: 8) { return .webp }
        if b.starts(with: [0x49, 0x49, 0x2A, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if b.starts(with: [0x49, 0x49, 0x2B, 0x00]) || b.starts(with: [0x4D, 0x4D, 0x00, 0x2B]) { return .tiff }
        if b.starts(with: [0, 0, 0, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) || b.starts(with: [0xFF, 0x4F, 0xFF, 0x51]) { return .jp2 }
        if b.starts(with: [0x76, 0x2F, 0x31, 0x01]) { return .exr }
        if b.starts(with: Array("#?RADIANCE".utf8)) || b.starts(with: Array("#?RGBE".utf8)) { return .hdr }
        if b.starts(with: Array("8BPS".utf8)) && (b.u16be(4) == 1 || b.u16be(4) == 2) { return .psd }   // PSD, PSB
        if b.starts(with: [0x1F, 0x8B, 0x08]) { return .svgz }
        if b[0] == 0x50, let kind = b.u8(1), Array("123456Ff".utf8).contains(kind), let space = b.u8(2), isSpace(space) { return .pnm }
        if b.starts(with: [0, 0]), [1, 2].contains(b.u16le(2)), let count = b.u16le(4), count > 0, b.u8(9) == 0,
           b.has(6, 16 * count) { return .ico }
        if b.starts(with: [0xFF, 0x0A]) || b.starts(with: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A]) { return .jxl }
        if b.starts(with: Array("%PDF-".utf8)) { return .pdf }
        if b.starts(with: Array("BM".utf8)) && bytes.count >= 26 { return .bmp }
        if b.matches(Array("ftyp".utf8), at: 4), let brand = b.string(at: 8, count: 4) {
            let compatible = isobmffBrands(b)
            if ["avif", "avis"].contains(brand) || compatible.contains("avif") { return .avif }
            if ["heic", "heix", "hevc", "hevx", "heim", "heis", "mif1", "msf1"].contains(brand) { return .heif }
        }
        if looksLikeSVG(bytes) { return .svg }
        if tga(b) != nil { return .tga }
        return nil
    }

    /// Header facts, or nil when the format is unknown or its header cannot be read.
    public static func facts(of bytes: [UInt8]) -> SourceFacts? {
        guard let format = format(of: bytes) else { return nil }
        let b = Bytes(bytes)
        switch format {
        case .jpeg: return jpeg(b)
        case .png: return png(b)
        case .gif: return gif(b)
        case .webp: return webp(b)
        case .tiff:
            let read = b.u8(2) == 0x2B || b.u8(3) == 0x2B ? bigTIFF(b) : tiff(b, base: 0)
            return read.map {
                var facts = SourceFacts(format: .tiff, width: $0.width, height: $0.height, orientation: $0.orientation, pages: $0.pages, hasAlpha: $0.alpha)
                facts.hasMaskChannel = $0.maskChannel
                return facts
            }
        case .avif, .heif: return isobmff(b, format: format)
        case .jxl: return jxl(b)
        case .bmp: return bmp(b)
        case .jp2: return jp2(b)
        case .pnm: return pnm(b)
        case .hdr: return radiance(b)
        case .exr: return exr(b)
        case .ico: return icoLargest(b).map { SourceFacts(format: .ico, width: $0.size.width, height: $0.size.height, hasAlpha: true) }
        case .tga: return tga(b)
        case .psd: return psd(b)
        case .svg, .svgz, .pdf: return nil
        }
    }

    /// Why the file is structurally incomplete, or nil when it ends where its format says it
    /// should. libvips only warns about some truncations (a JPEG without its end marker decodes
    /// as grey), so Derive checks the structure itself: a truncated upload is a failed job, not a
    /// half-grey thumbnail.
    public static func truncation(of bytes: [UInt8], format: ImageFormat) -> String? {
        let b = Bytes(bytes)
        switch format {
        case .jpeg:
            // Find the first scan, then the end-of-image marker after it. Entropy-coded data
            // stuffs 0xFF as FF 00, so FF D9 there is the real end.
            var offset = 2
            var segments = 0
            while offset + 4 <= b.count, segments < 10_000 {
                segments += 1
                guard b[offset] == 0xFF else { return "the JPEG markers are damaged" }
                let marker = b[offset + 1]
                if marker == 0xFF { offset += 1; continue }
                if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { offset += 2; continue }
                if marker == 0xD9 { return "the JPEG ends before its image data" }
                guard let length = b.u16be(offset + 2), length >= 2 else { return "the JPEG markers are damaged" }
                if marker == 0xDA {
                    // The end marker sits at the end (before any trailer), so search backwards;
                    // an embedded thumbnail's marker lies before the scan and does not count.
                    var i = b.count - 2
                    while i >= offset + 2 + length {
                        if bytes[i] == 0xFF && bytes[i + 1] == 0xD9 { return nil }
                        i -= 1
                    }
                    return "the JPEG is truncated: its image data has no end marker"
                }
                offset += 2 + length
            }
            return "the JPEG is truncated before its image data"
        case .png:
            var offset = 8
            var chunks = 0
            while offset + 8 <= b.count, chunks < 1_000_000 {
                chunks += 1
                guard let length = b.u32be(offset), let type = b.string(at: offset + 4, count: 4) else { break }
                if type == "IEND" { return nil }
                offset += 12 + length
            }
            return "the PNG is truncated: it has no IEND chunk"
        case .webp:
            guard let size = b.u32le(4) else { return "the WebP header is truncated" }
            return size + 8 > b.count ? "the WebP is truncated: its header declares \(size + 8) bytes, the file has \(b.count)" : nil
        case .gif:
            return gifComplete(b) ? nil : "the GIF is truncated inside its image data"
        case .pnm:
            guard let header = pnmHeader(b) else { return "the Netpbm header is truncated or damaged" }
            guard let needed = header.dataBytes else {
                // Plain (text) Netpbm: count the samples; a bitmap's digits need no spaces.
                let bitmap = b[1] == UInt8(ascii: "1")
                let samples = header.width * header.height * (b[1] == UInt8(ascii: "3") ? 3 : 1)
                var found = 0, offset = header.dataStart, inNumber = false
                while offset < b.count, found < samples {
                    let c = bytes[offset]
                    if c == UInt8(ascii: "#") {
                        while offset < b.count, bytes[offset] != 0x0A { offset += 1 }
                        inNumber = false
                    } else if (0x30...0x39).contains(c) {
                        if bitmap || !inNumber { found += 1 }
                        inNumber = true
                    } else {
                        inNumber = false
                    }
                    offset += 1
                }
                return found < samples ? "the Netpbm file is truncated: its header declares \(samples) samples, the file has \(found)" : nil
            }
            return header.dataStart + needed > b.count
                ? "the Netpbm file is truncated: its header declares \(header.dataStart + needed) bytes, the file has \(b.count)" : nil
        case .jp2:
            // A codestream ends with its EOC marker (FF D9); in a JP2 file the codestream box
            // either declares its length or runs to the end of the file.
            var end = b.count
            if !b.starts(with: [0xFF, 0x4F]) {
                var offset = 0
                var boxes = 0
                end = -1
                while offset + 8 <= b.count, boxes < 1000 {
                    boxes += 1
                    guard let size = b.u32be(offset), let type = b.string(at: offset + 4, count: 4) else { break }
                    if type == "jp2c" {
                        end = size == 0 ? b.count : offset + size
                        break
                    }
                    guard size >= 8 else { return "the JPEG 2000 boxes are damaged" }
                    offset += size
                }
                guard end >= 0 else { return "the JPEG 2000 file is truncated before its codestream" }
                if end > b.count { return "the JPEG 2000 file is truncated: its codestream box declares \(end) bytes, the file has \(b.count)" }
            }
            return b.matches([0xFF, 0xD9], at: end - 2) ? nil : "the JPEG 2000 codestream is truncated: it has no end marker"
        case .ico:
            guard let count = b.u16le(4) else { return "the ICO directory is truncated" }
            for i in 0..<count {
                guard let size = b.u32le(6 + 16 * i + 8), let offset = b.u32le(6 + 16 * i + 12) else { return "the ICO directory is truncated" }
                if offset + size > b.count { return "the ICO is truncated: image \(i + 1) ends at byte \(offset + size), the file has \(b.count)" }
            }
            return nil
        default:
            return nil
        }
    }

    /// Whether every GIF block the file starts is also finished.
    static func gifComplete(_ b: Bytes) -> Bool {
        guard let flags = b.u8(10) else { return false }
        var offset = 13
        if flags & 0x80 != 0 { offset += 3 << (Int(flags & 0x07) + 1) }
        var blocks = 0
        while offset < b.count, blocks < 1_000_000 {
            blocks += 1
            switch b[offset] {
            case 0x21:
                guard let next = skipSubBlocks(b, from: offset + 2) else { return false }
                offset = next
            case 0x2C:
                guard let local = b.u8(offset + 9) else { return false }
                offset += 10
                if local & 0x80 != 0 { offset += 3 << (Int(local & 0x07) + 1) }
                guard let next = skipSubBlocks(b, from: offset + 1) else { return false }
                offset = next
            case 0x3B:
                return true
            default:
                return false
            }
        }
        return offset >= b.count
    }

    // MARK: - JPEG

    static func jpeg(_ b: Bytes) -> SourceFacts? {
        var offset = 2
        var orientation = 1
        var steps = 0
        while offset + 4 <= b.count, steps < 10_000 {
            steps += 1
            guard b[offset] == 0xFF else { return nil }
            var marker = b[offset + 1]
            while marker == 0xFF, offset + 2 < b.count {
                offset += 1
                marker = b[offset + 1]
            }
            offset += 2
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }
            if marker == 0xD9 || marker == 0xDA { return nil }
            guard let length = b.u16be(offset), length >= 2 else { return nil }
            let segment = offset + 2
            if marker == 0xE1, b.matches(Array("Exif".utf8) + [0, 0], at: segment) {
                orientation = exifOrientation(b, tiffStart: segment + 6) ?? orientation
            }
            let isFrame = (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker)
            if isFrame {
                guard let height = b.u16be(segment + 1), let width = b.u16be(segment + 3), b.u8(segment + 5) != nil,
                      width > 0, height > 0 else { return nil }
                var facts = SourceFacts(format: .jpeg, width: width, height: height, orientation: orientation)
                facts.isCMYK = b.u8(segment + 5) == 4
                return facts
            }
            offset += length
        }
        return nil
    }

    // MARK: - PNG

    static func png(_ b: Bytes) -> SourceFacts? {
        guard b.matches(Array("IHDR".utf8), at: 12), let width = b.u32be(16), let height = b.u32be(20),
              let colorType = b.u8(25), width > 0, height > 0 else { return nil }
        var alpha = colorType == 4 || colorType == 6
        var offset = 8
        var chunks = 0
        while !alpha, offset + 8 <= b.count, chunks < 10_000 {
            chunks += 1
            guard let length = b.u32be(offset), let type = b.string(at: offset + 4, count: 4) else { break }
            if type == "tRNS" { alpha = true }
            if type == "IDAT" || type == "IEND" { break }
            offset += 12 + length
        }
        return SourceFacts(format: .png, width: width, height: height, hasAlpha: alpha)
    }

    // MARK: - GIF

    static func gif(_ b: Bytes) -> SourceFacts? {
        guard let width = b.u16le(6), let height = b.u16le(8), let flags = b.u8(10), width > 0, height > 0 else { return nil }
        var offset = 13
        if flags & 0x80 != 0 { offset += 3 << (Int(flags & 0x07) + 1) }
        var frames = 0
        var alpha = false
        var blocks = 0
        scan: while offset < b.count, blocks < 1_000_000 {
            blocks += 1
            switch b[offset] {
            case 0x21:
                if b.u8(offset + 1) == 0xF9, let packed = b.u8(offset + 3), packed & 0x01 != 0 { alpha = true }
                guard let next = skipSubBlocks(b, from: offset + 2) else { break scan }
                offset = next
            case 0x2C:
                frames += 1
                guard let local = b.u8(offset + 9) else { break scan }
                offset += 10
                if local & 0x80 != 0 { offset += 3 << (Int(local & 0x07) + 1) }
                guard let next = skipSubBlocks(b, from: offset + 1) else { break scan }
                offset = next
            default:
                break scan
            }
        }
        return SourceFacts(format: .gif, width: width, height: height, pages: max(1, frames), hasAlpha: alpha)
    }

    static func skipSubBlocks(_ b: Bytes, from start: Int) -> Int? {
        var offset = start
        while let size = b.u8(offset) {
            offset += 1 + Int(size)
            if size == 0 { return offset }
        }
        return nil
    }

    // MARK: - WebP

    static func webp(_ b: Bytes) -> SourceFacts? {
        var offset = 12
        var width = 0, height = 0, alpha = false, frames = 0, orientation = 1
        var chunks = 0
        while offset + 8 <= b.count, chunks < 100_000 {
            chunks += 1
            guard let type = b.string(at: offset, count: 4), let size = b.u32le(offset + 4) else { break }
            let data = offset + 8
            switch type {
            case "VP8X":
                guard let flags = b.u8(data), let w = b.u24le(data + 4), let h = b.u24le(data + 7) else { return nil }
                alpha = flags & 0x10 != 0
                width = w + 1
                height = h + 1
            case "VP8 " where width == 0:
                guard b.matches([0x9D, 0x01, 0x2A], at: data + 3), let w = b.u16le(data + 6), let h = b.u16le(data + 8) else { return nil }
                width = w & 0x3FFF
                height = h & 0x3FFF
            case "VP8L" where width == 0:
                guard b.u8(data) == 0x2F, let bits = b.u32le(data + 1) else { return nil }
                width = (bits & 0x3FFF) + 1
                height = ((bits >> 14) & 0x3FFF) + 1
                alpha = (bits >> 28) & 1 == 1
            case "ANMF":
                frames += 1
            case "EXIF":
                let start = b.matches(Array("Exif".utf8) + [0, 0], at: data) ? data + 6 : data
                orientation = exifOrientation(b, tiffStart: start) ?? orientation
            default:
                break
            }
            offset = data + size + (size & 1)
        }
        guard width > 0, height > 0 else { return nil }
        return SourceFacts(format: .webp, width: width, height: height, orientation: orientation, pages: max(1, frames), hasAlpha: alpha)
    }

    // MARK: - TIFF and EXIF

    struct TIFFFacts {
        var width = 0, height = 0, orientation = 1, pages = 0, alpha = false
        /// ExtraSamples says the first extra channel is unspecified (0): a mask, not alpha.
        var maskChannel = false

        /// One entry of the first directory, classic or BigTIFF alike.
        mutating func read(tag: Int, value: Int?) {
            switch tag {
            case 256: width = value ?? 0
            case 257: height = value ?? 0
            case 274: orientation = value ?? 1
            case 338:
                alpha = true
                maskChannel = value == 0
            default: break
            }
        }
    }

    /// Reads IFD0 (size, orientation, alpha) and counts the IFD chain for pages.
    static func tiff(_ b: Bytes, base: Int) -> TIFFFacts? {
        guard let little = byteOrder(b, base), let first = b.u32(base + 4, little: little) else { return nil }
        var facts = TIFFFacts()
        var ifd = first
        var seen = Set<Int>()
        while ifd > 0, facts.pages < 10_000, seen.insert(ifd).inserted {
            let start = base + ifd
            guard let count = b.u16(start, little: little) else { break }
            if facts.pages == 0 {
                for i in 0..<min(count, 4096) {
                    let entry = start + 2 + i * 12
                    guard let tag = b.u16(entry, little: little), let type = b.u16(entry + 2, little: little),
                          let count = b.u32(entry + 4, little: little) else { break }
                    // The first value: in the entry when the values fit in its four bytes (two
                    // SHORTs, one LONG), else at the offset the entry holds (ExtraSamples of
                    // three or more channels).
                    let inline = type == 3 ? count <= 2 : count <= 1
                    let at = inline ? entry + 8 : b.u32(entry + 8, little: little).map { base + $0 }
                    facts.read(tag: tag, value: at.flatMap { type == 3 ? b.u16($0, little: little) : b.u32($0, little: little) })
                }
            }
            facts.pages += 1
            guard let next = b.u32(start + 2 + count * 12, little: little) else { break }
            ifd = next
        }
        guard facts.width > 0, facts.height > 0 else { return nil }
        return facts
    }

    static func exifOrientation(_ b: Bytes, tiffStart: Int) -> Int? {
        guard let little = byteOrder(b, tiffStart), let ifd = b.u32(tiffStart + 4, little: little),
              let count = b.u16(tiffStart + ifd, little: little) else { return nil }
        for i in 0..<min(count, 4096) {
            let entry = tiffStart + ifd + 2 + i * 12
            guard let tag = b.u16(entry, little: little) else { return nil }
            if tag == 0x0112, let value = b.u16(entry + 8, little: little), (1...8).contains(value) { return value }
        }
        return nil
    }

    static func byteOrder(_ b: Bytes, _ offset: Int) -> Bool? {
        if b.matches([0x49, 0x49, 0x2A, 0x00], at: offset) { return true }
        if b.matches([0x4D, 0x4D, 0x00, 0x2A], at: offset) { return false }
        return nil
    }

    // MARK: - AVIF and HEIF

    static func isobmffBrands(_ b: Bytes) -> [String] {
        guard let size = b.u32be(0), size >= 16 else { return [] }
        return stride(from: 16, to: min(size, 256), by: 4).compactMap { b.string(at: $0, count: 4) }
    }

    /// Walks meta → iprp → ipco for `ispe` (image spatial extents) and an alpha `auxC`.
    static func isobmff(_ b: Bytes, format: ImageFormat) -> SourceFacts? {
        var best: Size?
        var alpha = false
        func walk(_ start: Int, _ end: Int, depth: Int) {
            var offset = start
            var boxes = 0
            while offset + 8 <= end, depth < 8, boxes < 10_000 {
                boxes += 1
                guard var size = b.u32be(offset), let type = b.string(at: offset + 4, count: 4) else { return }
                var header = 8
                if size == 1, let large = b.u32be(offset + 12), b.u32be(offset + 8) == 0 {
                    size = large
                    header = 16
                } else if size == 0 {
                    size = end - offset
                }
                guard size >= header, offset + size <= end else { return }
                switch type {
                case "meta": walk(offset + header + 4, offset + size, depth: depth + 1)
                case "iprp", "ipco": walk(offset + header, offset + size, depth: depth + 1)
                case "ispe":
                    if let w = b.u32be(offset + header + 4), let h = b.u32be(offset + header + 8), w > 0, h > 0,
                       best == nil || w * h > best!.pixels {
                        best = Size(w, h)
                    }
                case "auxC":
                    if let text = b.string(at: offset + header + 4, count: min(64, size - header - 4)), text.contains("alpha") { alpha = true }
                default: break
                }
                offset += size
            }
        }
        walk(0, b.count, depth: 0)
        guard let best else { return nil }
        return SourceFacts(format: format, width: best.width, height: best.height, hasAlpha: alpha)
    }

    // MARK: - JPEG XL

    /// Reads the codestream's SizeHeader (bare, or inside a `jxlc`/`jxlp` box).
    static func jxl(_ b: Bytes) -> SourceFacts? {
        var start = 0
        if !b.starts(with: [0xFF, 0x0A]) {
            var offset = 0
            var boxes = 0
            start = -1
            while offset + 8 <= b.count, boxes < 10_000 {
                boxes += 1
                guard let size = b.u32be(offset), let type = b.string(at: offset + 4, count: 4), size >= 8 else { return nil }
                if type == "jxlc" { start = offset + 8; break }
                if type == "jxlp" { start = offset + 12; break }
                offset += size
            }
            guard start >= 0, b.matches([0xFF, 0x0A], at: start) else { return nil }
        }
        var bits = BitReader(b, offset: start + 2)
        func dimension(small: Bool) -> Int? {
            if small { return bits.read(5).map { ($0 + 1) * 8 } }
            guard let selector = bits.read(2) else { return nil }
            return bits.read([9, 13, 18, 30][selector]).map { $0 + 1 }
        }
        guard let div8 = bits.read(1), let height = dimension(small: div8 == 1), let ratio = bits.read(3) else { return nil }
        let ratios: [(Int, Int)] = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)]
        let width: Int
        if ratio == 0 {
            guard let w = dimension(small: div8 == 1) else { return nil }
            width = w
        } else {
            let (n, d) = ratios[ratio - 1]
            width = height * n / d
        }
        return SourceFacts(format: .jxl, width: width, height: height)
    }

    // MARK: - BMP

    static func bmp(_ b: Bytes) -> SourceFacts? {
        guard let width = b.i32le(18), let height = b.i32le(22), let bpp = b.u16le(28), width > 0, height != 0 else { return nil }
        return SourceFacts(format: .bmp, width: width, height: abs(height), hasAlpha: bpp == 32)
    }

    // MARK: - BigTIFF

    /// BigTIFF: 8-byte offsets and counts, 20-byte IFD entries.
    static func bigTIFF(_ b: Bytes) -> TIFFFacts? {
        let little = b.u8(0) == 0x49
        guard b.u16(4, little: little) == 8, let first = b.u64(8, little: little) else { return nil }
        var facts = TIFFFacts()
        var ifd = first
        var seen = Set<Int>()
        while ifd > 0, facts.pages < 10_000, seen.insert(ifd).inserted {
            guard let count = b.u64(ifd, little: little) else { break }
            if facts.pages == 0 {
                for i in 0..<min(count, 4096) {
                    let entry = ifd + 8 + i * 20
                    guard let tag = b.u16(entry, little: little), let type = b.u16(entry + 2, little: little) else { break }
                    let value = type == 3 ? b.u16(entry + 12, little: little) : type == 16 ? b.u64(entry + 12, little: little) : b.u32(entry + 12, little: little)
                    facts.read(tag: tag, value: value)
                }
            }
            facts.pages += 1
            guard count < 1 << 20, let next = b.u64(ifd + 8 + count * 20, little: little) else { break }
            ifd = next
        }
        guard facts.width > 0, facts.height > 0 else { return nil }
        return facts
    }

    // MARK: - JPEG 2000

    /// A JP2 file's `ihdr` box (inside `jp2h`), or a bare codestream's SIZ marker.
    static func jp2(_ b: Bytes) -> SourceFacts? {
        if b.starts(with: [0xFF, 0x4F, 0xFF, 0x51]) {
            guard let xs = b.u32be(8), let ys = b.u32be(12), let xo = b.u32be(16), let yo = b.u32be(20), let components = b.u16be(40),
                  xs > xo, ys > yo else { return nil }
            return SourceFacts(format: .jp2, width: xs - xo, height: ys - yo, hasAlpha: components == 2 || components == 4)
        }
        var offset = 0
        var boxes = 0
        while offset + 8 <= b.count, boxes < 1000 {
            boxes += 1
            guard let size = b.u32be(offset), let type = b.string(at: offset + 4, count: 4) else { return nil }
            if type == "jp2h" {
                guard b.matches(Array("ihdr".utf8), at: offset + 12), let height = b.u32be(offset + 16), let width = b.u32be(offset + 20),
                      let components = b.u16be(offset + 24), width > 0, height > 0 else { return nil }
                return SourceFacts(format: .jp2, width: width, height: height, hasAlpha: components == 2 || components == 4)
            }
            guard size >= 8 else { return nil }
            offset += size
        }
        return nil
    }

    // MARK: - Netpbm

    struct PNMHeader {
        var width: Int, height: Int, dataStart: Int
        /// Bytes of raster data the header promises (nil for the plain, text formats).
        var dataBytes: Int?
    }

    /// `P1`–`P6` and `PF`/`Pf`: magic, width, height and (but for bitmaps) the maximum value, as
    /// whitespace-separated text with `#` comments; one whitespace byte, then the raster.
    static func pnmHeader(_ b: Bytes) -> PNMHeader? {
        guard let kind = b.u8(1) else { return nil }
        let bitmap = kind == UInt8(ascii: "1") || kind == UInt8(ascii: "4")
        var offset = 2
        var numbers: [Double] = []
        while numbers.count < (bitmap ? 2 : 3) {
            while let c = b.u8(offset), isSpace(c) || c == UInt8(ascii: "#") {
                if c == UInt8(ascii: "#") {
                    while let d = b.u8(offset), d != 0x0A, d != 0x0D { offset += 1 }
                } else {
                    offset += 1
                }
            }
            let start = offset
            while let c = b.u8(offset), !isSpace(c), offset - start < 32 { offset += 1 }
            guard offset > start, let text = b.string(at: start, count: offset - start), let value = Double(text) else { return nil }
            numbers.append(value)
        }
        guard b.u8(offset).map(isSpace) == true, numbers[0] >= 1, numbers[1] >= 1, numbers[0] < 1e9, numbers[1] < 1e9 else { return nil }
        let width = Int(numbers[0]), height = Int(numbers[1])
        let maximum = bitmap ? 1 : numbers[2]
        let dataBytes: Int? = switch kind {
        case UInt8(ascii: "4"): (width + 7) / 8 * height
        case UInt8(ascii: "5"): width * height * (maximum > 255 ? 2 : 1)
        case UInt8(ascii: "6"): width * height * 3 * (maximum > 255 ? 2 : 1)
        case UInt8(ascii: "F"): width * height * 12
        case UInt8(ascii: "f"): width * height * 4
        default: nil
        }
        return PNMHeader(width: width, height: height, dataStart: offset + 1, dataBytes: dataBytes)
    }

    static func pnm(_ b: Bytes) -> SourceFacts? {
        pnmHeader(b).map { SourceFacts(format: .pnm, width: $0.width, height: $0.height) }
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (0x09...0x0D).contains(c) }

    // MARK: - Radiance HDR

    /// Text header lines up to a blank line, then the resolution line (`-Y 512 +X 768`).
    static func radiance(_ b: Bytes) -> SourceFacts? {
        var offset = 0
        var lines = 0
        var previousBlank = false
        while offset < b.count, lines < 1000 {
            lines += 1
            let start = offset
            while let c = b.u8(offset), c != 0x0A, offset - start < 4096 { offset += 1 }
            guard b.u8(offset) == 0x0A else { return nil }
            let line = b.string(at: start, count: offset - start) ?? ""
            offset += 1
            if previousBlank {
                let parts = line.split(separator: " ")
                guard parts.count == 4, let first = Int(parts[1]), let second = Int(parts[3]), first > 0, second > 0 else { return nil }
                let yFirst = parts[0].hasSuffix("Y")
                guard yFirst != parts[2].hasSuffix("Y") else { return nil }
                return SourceFacts(format: .hdr, width: yFirst ? second : first, height: yFirst ? first : second)
            }
            previousBlank = line.isEmpty
        }
        return nil
    }

    // MARK: - OpenEXR

    /// The first header's attributes: `dataWindow` (box2i) for the size, `channels` for alpha.
    static func exr(_ b: Bytes) -> SourceFacts? {
        var offset = 8
        var size: Size?
        var alpha = false
        var attributes = 0
        func cString(_ at: Int) -> String? {
            var end = at
            while let c = b.u8(end), c != 0, end - at < 256 { end += 1 }
            guard b.u8(end) == 0 else { return nil }
            return end == at ? "" : b.string(at: at, count: end - at)
        }
        while attributes < 1000, let name = cString(offset) {
            attributes += 1
            if name.isEmpty { break }
            guard let type = cString(offset + name.utf8.count + 1) else { return nil }
            let sizeAt = offset + name.utf8.count + type.utf8.count + 2
            guard let length = b.u32le(sizeAt) else { return nil }
            let value = sizeAt + 4
            if name == "dataWindow", type == "box2i" {
                guard let x0 = b.i32le(value), let y0 = b.i32le(value + 4), let x1 = b.i32le(value + 8), let y1 = b.i32le(value + 12),
                      x1 >= x0, y1 >= y0 else { return nil }
                size = Size(x1 - x0 + 1, y1 - y0 + 1)
            }
            if name == "channels", type == "chlist" {
                var channel = value
                while channel < value + length, let channelName = cString(channel), !channelName.isEmpty {
                    if channelName == "A" || channelName.hasSuffix(".A") { alpha = true }
                    channel += channelName.utf8.count + 1 + 16
                }
            }
            offset = value + length
        }
        guard let size else { return nil }
        return SourceFacts(format: .exr, width: size.width, height: size.height, hasAlpha: alpha)
    }

    // MARK: - ICO, TGA, PSD

    /// The index and size of the largest image in an icon's directory (0 in a size byte is 256).
    public static func icoLargest(_ bytes: [UInt8]) -> (index: Int, size: Size)? { icoLargest(Bytes(bytes)) }

    static func icoLargest(_ b: Bytes) -> (index: Int, size: Size)? {
        guard let count = b.u16le(4), count > 0 else { return nil }
        var best: (index: Int, size: Size)?
        for i in 0..<count {
            guard let w = b.u8(6 + 16 * i), let h = b.u8(6 + 16 * i + 1) else { return nil }
            let size = Size(w == 0 ? 256 : Int(w), h == 0 ? 256 : Int(h))
            if best == nil || size.pixels > best!.size.pixels { best = (i, size) }
        }
        return best
    }

    /// TGA has no magic number: a header whose every field holds a value the format defines.
    static func tga(_ b: Bytes) -> SourceFacts? {
        guard let mapType = b.u8(1), let type = b.u8(2), let mapDepth = b.u8(7), let width = b.u16le(12), let height = b.u16le(14),
              let depth = b.u8(16), let descriptor = b.u8(17),
              mapType <= 1, [1, 2, 3, 9, 10, 11].contains(type), width > 0, height > 0,
              [8, 15, 16, 24, 32].contains(depth), descriptor & 0xC0 == 0,
              mapType == 0 ? mapDepth == 0 : [15, 16, 24, 32].contains(mapDepth),
              (type == 1 || type == 9) == (mapType == 1) else { return nil }
        return SourceFacts(format: .tga, width: width, height: height, hasAlpha: descriptor & 0x0F != 0 || depth == 32)
    }

    static func psd(_ b: Bytes) -> SourceFacts? {
        guard let channels = b.u16be(12), let height = b.u32be(14), let width = b.u32be(18), let mode = b.u16be(24),
              width > 0, height > 0 else { return nil }
        let colour = switch mode { case 3: 3; case 4: 4; default: 1 }
        return SourceFacts(format: .psd, width: width, height: height, hasAlpha: channels > colour)
    }

    // MARK: - SVG

    static func looksLikeSVG(_ bytes: [UInt8]) -> Bool {
        let head = String(decoding: bytes.prefix(1024), as: UTF8.self).lowercased()
        let trimmed = head.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" })
        return (trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<svg") || trimmed.hasPrefix("<!doctype svg") || trimmed.hasPrefix("<!--"))
            && head.contains("<svg")
    }
}

/// Bounds-checked reads from a byte array: every accessor returns nil past the end.
struct Bytes {
    let bytes: [UInt8]
    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var count: Int { bytes.count }
    subscript(_ i: Int) -> UInt8 { i >= 0 && i < bytes.count ? bytes[i] : 0 }

    func u8(_ i: Int) -> UInt8? { i >= 0 && i < bytes.count ? bytes[i] : nil }

    func has(_ offset: Int, _ length: Int) -> Bool { offset >= 0 && length >= 0 && offset <= bytes.count - length }

    func starts(with prefix: [UInt8]) -> Bool { matches(prefix, at: 0) }

    func matches(_ pattern: [UInt8], at offset: Int) -> Bool {
        guard has(offset, pattern.count) else { return false }
        for (i, byte) in pattern.enumerated() where bytes[offset + i] != byte { return false }
        return true
    }

    func string(at offset: Int, count: Int) -> String? {
        guard count > 0, has(offset, count) else { return nil }
        return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
    }

    func u16be(_ i: Int) -> Int? { has(i, 2) ? Int(bytes[i]) << 8 | Int(bytes[i + 1]) : nil }
    func u16le(_ i: Int) -> Int? { has(i, 2) ? Int(bytes[i + 1]) << 8 | Int(bytes[i]) : nil }
    func u24le(_ i: Int) -> Int? { has(i, 3) ? Int(bytes[i + 2]) << 16 | Int(bytes[i + 1]) << 8 | Int(bytes[i]) : nil }
    func u32be(_ i: Int) -> Int? {
        has(i, 4) ? Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) : nil
    }
    func u32le(_ i: Int) -> Int? {
        has(i, 4) ? Int(bytes[i + 3]) << 24 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 1]) << 8 | Int(bytes[i]) : nil
    }
    func i32le(_ i: Int) -> Int? { u32le(i).map { Int(Int32(truncatingIfNeeded: $0)) } }
    /// An unsigned 64-bit offset, nil when it does not fit an Int (no file is that large).
    func u64(_ i: Int, little: Bool) -> Int? {
        guard let a = u32(i, little: little), let b = u32(i + 4, little: little) else { return nil }
        let (high, low) = little ? (b, a) : (a, b)
        return high < 1 << 30 ? high << 32 | low : nil
    }
    func u16(_ i: Int, little: Bool) -> Int? { little ? u16le(i) : u16be(i) }
    func u32(_ i: Int, little: Bool) -> Int? { little ? u32le(i) : u32be(i) }
}

/// Least-significant-bit-first reader, as JPEG XL headers are packed.
struct BitReader {
    let bytes: Bytes
    var position: Int

    init(_ bytes: Bytes, offset: Int) {
        self.bytes = bytes
        self.position = offset * 8
    }

    mutating func read(_ count: Int) -> Int? {
        var value = 0
        for i in 0..<count {
            guard let byte = bytes.u8(position >> 3) else { return nil }
            value |= Int((byte >> UInt8(position & 7)) & 1) << i
            position += 1
        }
        return value
    }
}
