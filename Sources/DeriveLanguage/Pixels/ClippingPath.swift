/// Photoshop paths stored in a file (`fl_clip`): the 8BIM image resources 2000–2997 in a JPEG's
/// APP13 segments ("Photoshop 3.0") or a TIFF's Photoshop tag (34377), each a list of 26-byte
/// records whose Bézier knots are 8.24 fixed-point fractions of the image's height and width.
/// Resource 2999 names the one Photoshop marks as the clipping path.
public struct ClippingPath: Sendable, Hashable {
    public struct Point: Sendable, Hashable {
        /// Fractions of the image's width and height (0...1 inside it).
        public var x: Double
        public var y: Double
    }

    /// A knot: the control point before the anchor, the anchor, the control point after it.
    public struct Knot: Sendable, Hashable {
        public var before: Point
        public var anchor: Point
        public var after: Point
    }

    public struct Subpath: Sendable, Hashable {
        public var closed: Bool
        public var knots: [Knot]
    }

    /// The resource ID (2000–2997).
    public var id: Int
    public var name: String
    public var subpaths: [Subpath]
}

/// Reads the paths Photoshop stores in JPEG and TIFF files.
public enum PhotoshopPaths {
    /// The paths found, in resource order, and the name resource 2999 gives the clipping path.
    public struct Found: Sendable, Hashable {
        public var paths: [ClippingPath]
        public var clippingPathName: String?

        /// The path `fl_clip` uses: by 1-based number, by name, else the one marked as the
        /// clipping path, else the first.
        public func path(number: Int? = nil, name: String? = nil) -> ClippingPath? {
            if let number { return paths.indices.contains(number - 1) ? paths[number - 1] : nil }
            if let name { return paths.first { $0.name == name } }
            if let marked = clippingPathName, let path = paths.first(where: { $0.name == marked }) { return path }
            return paths.first
        }
    }

    /// The paths of a JPEG or TIFF file; none for other formats or when there are none.
    public static func read(_ bytes: [UInt8]) -> Found {
        let block: [UInt8]?
        if bytes.starts(with: [0xFF, 0xD8]) {
            block = jpegResources(bytes)
        } else if bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            block = tiffResources(bytes)
        } else {
            block = nil
        }
        return block.map(resources) ?? Found(paths: [], clippingPathName: nil)
    }

    /// The image resources of every "Photoshop 3.0" APP13 segment, joined (a long block is
    /// split across segments).
    static func jpegResources(_ bytes: [UInt8]) -> [UInt8]? {
        let signature = Array("Photoshop 3.0\0".utf8)
        var block: [UInt8] = []
        var i = 2
        while i + 4 <= bytes.count, bytes[i] == 0xFF {
            let marker = bytes[i + 1]
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 || marker == 0xFF {
                i += marker == 0xFF ? 1 : 2
                continue
            }
            // Start of scan: the entropy-coded data follows, and no more markers worth reading.
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            let end = i + 2 + length
            guard length >= 2, end <= bytes.count else { break }
            if marker == 0xED, bytes[(i + 4)..<end].starts(with: signature) {
                block += bytes[(i + 4 + signature.count)..<end]
            }
            i = end
        }
        return block.isEmpty ? nil : block
    }

    /// The Photoshop tag (34377) of a TIFF's first image.
    static func tiffResources(_ bytes: [UInt8]) -> [UInt8]? {
        let little = bytes[0] == 0x49
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= bytes.count else { return nil }
            return little ? Int(bytes[at]) | Int(bytes[at + 1]) << 8 : Int(bytes[at]) << 8 | Int(bytes[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return little ? a | b << 16 : a << 16 | b
        }
        guard let ifd = u32(4), let count = u16(ifd) else { return nil }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at), let type = u16(at + 2), let n = u32(at + 4) else { return nil }
            // BYTE (1) or UNDEFINED (7); four bytes or fewer are stored in the entry itself.
            guard tag == 34377, type == 1 || type == 7 else { continue }
            let start = n <= 4 ? at + 8 : (u32(at + 8) ?? -1)
            guard start >= 0, start + n <= bytes.count else { return nil }
            return Array(bytes[start..<(start + n)])
        }
        return nil
    }

    /// The paths among 8BIM resources: each a signature, an ID, a Pascal name padded to even
    /// length, a size and that many bytes padded to even length.
    static func resources(_ block: [UInt8]) -> Found {
        var found = Found(paths: [], clippingPathName: nil)
        var i = 0
        while i + 12 <= block.count, block[i..<(i + 4)].elementsEqual("8BIM".utf8) {
            let id = Int(block[i + 4]) << 8 | Int(block[i + 5])
            let nameLength = Int(block[i + 6])
            let name = String(decoding: block[min(block.count, i + 7)..<min(block.count, i + 7 + nameLength)], as: UTF8.self)
            var at = i + 6 + nameLength + 1
            if at % 2 != 0 { at += 1 }
            guard at + 4 <= block.count else { break }
            let size = Int(block[at]) << 24 | Int(block[at + 1]) << 16 | Int(block[at + 2]) << 8 | Int(block[at + 3])
            let start = at + 4, end = start + size
            guard end <= block.count else { break }
            let data = Array(block[start..<end])
            if (2000...2997).contains(id) {
                found.paths.append(ClippingPath(id: id, name: name, subpaths: subpaths(data)))
            } else if id == 2999, let length = data.first, Int(length) + 1 <= data.count {
                found.clippingPathName = String(decoding: data[1...Int(length)], as: UTF8.self)
            }
            i = end + size % 2
        }
        return found
    }

    /// Path records: selector 0 or 3 starts a closed or open subpath of n knots; 1, 2, 4 and 5
    /// are its knots (linked or not); 6, 7 and 8 carry no geometry.
    static func subpaths(_ data: [UInt8]) -> [ClippingPath.Subpath] {
        func fixed(_ at: Int) -> Double {
            let raw = Int32(bitPattern: UInt32(data[at]) << 24 | UInt32(data[at + 1]) << 16 | UInt32(data[at + 2]) << 8 | UInt32(data[at + 3]))
            return Double(raw) / Double(1 << 24)
        }
        func point(_ at: Int) -> ClippingPath.Point { ClippingPath.Point(x: fixed(at + 4), y: fixed(at)) }
        var result: [ClippingPath.Subpath] = []
        var remaining = 0
        for record in stride(from: 0, to: data.count - 25, by: 26) {
            let selector = Int(data[record]) << 8 | Int(data[record + 1])
            switch selector {
            case 0, 3:
                remaining = Int(data[record + 2]) << 8 | Int(data[record + 3])
                result.append(ClippingPath.Subpath(closed: selector == 0, knots: []))
            case 1, 2, 4, 5:
                guard remaining > 0, !result.isEmpty else { break }
                result[result.count - 1].knots.append(ClippingPath.Knot(before: point(record + 2), anchor: point(record + 10), after: point(record + 18)))
                remaining -= 1
            default:
                break
            }
        }
        return result.filter { !$0.knots.isEmpty }
    }
}
