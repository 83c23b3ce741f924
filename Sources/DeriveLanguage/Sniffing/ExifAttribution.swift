/// The photographer's credit in an EXIF block: IFD0's Copyright (0x8298) and Artist (0x013B)
/// tags, read from the raw block byte for byte, and written back as a new block that holds
/// those two tags and nothing else. `fl_keep_attribution` uses it: libvips would otherwise
/// rebuild the tags from libexif's display strings ("Marsel Minga (Photographer) - [None]
/// (Editor)"), which do not round-trip.
///
/// The reader takes untrusted bytes: every offset and count is checked against the block, and a
/// block it cannot follow gives nil, never a trap.
public struct ExifAttribution: Sendable, Equatable {
    /// The tags' values exactly as stored (ASCII, the terminating NUL included when the source
    /// had one; EXIF allows "photographer NUL editor NUL" in Copyright).
    public var copyright: [UInt8]?
    public var artist: [UInt8]?

    public static let copyrightTag: UInt16 = 0x8298
    public static let artistTag: UInt16 = 0x013B
    static let asciiType: UInt16 = 2
    /// "Exif" NUL NUL, which JPEG's APP1 segment and libvips' `exif-data` put before the TIFF header.
    static let exifPrefix: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]

    public init(copyright: [UInt8]? = nil, artist: [UInt8]? = nil) {
        self.copyright = copyright.flatMap { $0.isEmpty ? nil : $0 }
        self.artist = artist.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The text of a value: up to its first NUL, as UTF-8 (EXIF says ASCII; cameras write Latin-1
    /// or UTF-8, which this shows with replacement characters where it is not UTF-8).
    public static func text(_ value: [UInt8]?) -> String? {
        guard let value else { return nil }
        return String(decoding: value.prefix { $0 != 0 }, as: UTF8.self)
    }

    public var copyrightText: String? { Self.text(copyright) }
    public var artistText: String? { Self.text(artist) }

    /// The attribution in an EXIF block (with or without the "Exif\0\0" prefix), or nil when
    /// the block is not a TIFF structure this can follow, or its IFD0 has neither tag as ASCII.
    /// A tag whose value lies outside the block is skipped; the first of repeated tags counts.
    public init?(exif block: [UInt8]) {
        var start = 0
        if block.count >= Self.exifPrefix.count && Array(block[0..<Self.exifPrefix.count]) == Self.exifPrefix {
            start = Self.exifPrefix.count
        }
        let tiff = block[start...]
        guard let reader = TIFFReader(tiff), let ifd0 = reader.u32(at: 4),
              let entries = reader.u16(at: Int(ifd0)) else { return nil }
        var copyright: [UInt8]?
        var artist: [UInt8]?
        for index in 0..<Int(entries) {
            let entry = Int(ifd0) + 2 + index * 12
            // An IFD that runs past the block is damaged: nothing in it is trusted.
            guard let tag = reader.u16(at: entry), let type = reader.u16(at: entry + 2),
                  let count = reader.u32(at: entry + 4), reader.has(entry + 8, 4) else { return nil }
            guard tag == Self.copyrightTag || tag == Self.artistTag, type == Self.asciiType, count > 0 else { continue }
            let valueAt = count <= 4 ? entry + 8 : reader.u32(at: entry + 8).map { Int($0) } ?? -1
            guard let value = reader.bytes(at: valueAt, Int(count)) else { continue }
            if tag == Self.copyrightTag, copyright == nil { copyright = value }
            if tag == Self.artistTag, artist == nil { artist = value }
        }
        guard copyright != nil || artist != nil else { return nil }
        self.init(copyright: copyright, artist: artist)
    }

    /// A new EXIF block ("Exif\0\0", a little-endian TIFF header, one IFD) holding only the
    /// Artist and Copyright tags, in tag order as TIFF asks; nil when there is neither.
    public var exifBlock: [UInt8]? {
        let tags = [(Self.artistTag, artist), (Self.copyrightTag, copyright)].compactMap { tag, value in value.map { (tag, $0) } }
        guard !tags.isEmpty else { return nil }
        var out = Self.exifPrefix
        var tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00]
        func put16(_ value: Int, into bytes: inout [UInt8]) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func put32(_ value: Int, into bytes: inout [UInt8]) {
            bytes += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24 & 0xFF)]
        }
        put32(8, into: &tiff)
        put16(tags.count, into: &tiff)
        var data: [UInt8] = []
        let dataStart = 8 + 2 + tags.count * 12 + 4
        for (tag, value) in tags {
            put16(Int(tag), into: &tiff)
            put16(Int(Self.asciiType), into: &tiff)
            put32(value.count, into: &tiff)
            if value.count <= 4 {
                tiff += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                put32(dataStart + data.count, into: &tiff)
                data += value
                // Values start on a word boundary.
                if data.count % 2 == 1 { data.append(0) }
            }
        }
        put32(0, into: &tiff)
        out += tiff + data
        return out
    }
}

/// Bounds-checked reads from a TIFF structure in either byte order; offsets count from the
/// TIFF header. Every read that would pass the end gives nil.
private struct TIFFReader {
    let bytes: ArraySlice<UInt8>
    let bigEndian: Bool

    init?(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        guard bytes.count >= 8 else { return nil }
        let base = bytes.startIndex
        switch (bytes[base], bytes[base + 1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        guard u16(at: 2) == 42 else { return nil }
    }

    func has(_ offset: Int, _ count: Int) -> Bool {
        offset >= 0 && count >= 0 && offset <= bytes.count && count <= bytes.count - offset
    }

    func bytes(at offset: Int, _ count: Int) -> [UInt8]? {
        guard has(offset, count) else { return nil }
        let base = bytes.startIndex + offset
        return Array(bytes[base..<base + count])
    }

    func u16(at offset: Int) -> UInt16? {
        guard let b = bytes(at: offset, 2) else { return nil }
        return bigEndian ? UInt16(b[0]) << 8 | UInt16(b[1]) : UInt16(b[1]) << 8 | UInt16(b[0])
    }

    func u32(at offset: Int) -> UInt32? {
        guard let b = bytes(at: offset, 4) else { return nil }
        let ordered = bigEndian ? b : b.reversed()
        return ordered.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
