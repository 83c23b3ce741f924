/// Photoshop documents written byte by byte for the tests, for what the fixtures lack (hidden
/// nested groups, clipping bases with an opacity or hidden, and hostile files: large layers off
/// a small canvas, many clipped layers, vector masks of many shapes). The layout is the one
/// `PhotoshopDocument` reads: header, empty colour mode data and resources, then the layer
/// records (bounds, four channels -1, 0, 1, 2, normal blend, opacity, clipping, the hidden flag,
/// an empty mask and blending ranges, the Pascal name, an `lsct` block and an optional `vmsk`),
/// then every channel's data.
struct SyntheticPSD {
    struct Layer {
        var name: String
        /// Left, top, right, bottom.
        var rect = (0, 0, 0, 0)
        /// `lsct`: 0 a layer, 1 a group, 3 a group's end marker.
        var section = 0
        var hidden = false
        var clipped = false
        var opacity = 255
        var colour: (UInt8, UInt8, UInt8) = (255, 0, 0)
        var alpha: UInt8 = 255
        var rle = false
        var vectorMask: [UInt8]?

        static func group(_ name: String, hidden: Bool = false) -> Layer { Layer(name: name, section: 1, hidden: hidden) }
        static let end = Layer(name: "</Layer group>", section: 3)
    }

    var width: Int
    var height: Int
    var layers: [Layer]

    static func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func u32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    static func i32(_ v: Int) -> [UInt8] { u32(Int(UInt32(bitPattern: Int32(v)))) }

    /// A channel of one value: raw, or RLE (runs of 128).
    static func channel(width: Int, height: Int, value: UInt8, rle: Bool) -> [UInt8] {
        guard rle else { return u16(0) + [UInt8](repeating: value, count: width * height) }
        var row: [UInt8] = []
        var left = width
        while left > 0 {
            let n = min(128, left)
            row += [UInt8(bitPattern: Int8(1 - n)), value]
            left -= n
        }
        var out = u16(1)
        for _ in 0..<height { out += u16(row.count) }
        for _ in 0..<height { out += row }
        return out
    }

    static func block(_ key: String, _ data: [UInt8]) -> [UInt8] { Array("8BIM".utf8) + Array(key.utf8) + u32(data.count) + data }

    /// A vector mask of `shapes` shapes combined (operation 1), each a closed subpath of the
    /// given knots (fractions of the height and width), or none.
    static func vectorMask(shapes: Int, knots: [(y: Double, x: Double)]) -> [UInt8] {
        func fixed(_ v: Double) -> [UInt8] { i32(Int(v * Double(1 << 24))) }
        var d = u32(3) + u32(0)
        for _ in 0..<shapes {
            d += u16(0) + u16(knots.count) + u16(1) + [UInt8](repeating: 0, count: 20)
            for k in knots {
                let point = fixed(k.y) + fixed(k.x)
                d += u16(2) + point + point + point
            }
        }
        return d
    }

    var bytes: [UInt8] {
        var records: [UInt8] = [], data: [UInt8] = []
        for l in layers {
            let (left, top, right, bottom) = l.rect
            let w = right - left, h = bottom - top
            let channels: [(Int, [UInt8])] = [
                (-1, Self.channel(width: w, height: h, value: l.alpha, rle: l.rle)),
                (0, Self.channel(width: w, height: h, value: l.colour.0, rle: l.rle)),
                (1, Self.channel(width: w, height: h, value: l.colour.1, rle: l.rle)),
                (2, Self.channel(width: w, height: h, value: l.colour.2, rle: l.rle)),
            ]
            var record = Self.i32(top) + Self.i32(left) + Self.i32(bottom) + Self.i32(right) + Self.u16(channels.count)
            for (id, bytes) in channels { record += Self.u16(id & 0xFFFF) + Self.u32(bytes.count) }
            var name = [UInt8(l.name.utf8.count)] + Array(l.name.utf8)
            while name.count % 4 != 0 { name.append(0) }
            var extra = Self.u32(0) + Self.u32(0) + name + Self.block("lsct", Self.u32(l.section))
            if let mask = l.vectorMask { extra += Self.block("vmsk", mask) }
            record += Array("8BIMnorm".utf8) + [UInt8(l.opacity), l.clipped ? 1 : 0, l.hidden ? 2 : 0, 0] + Self.u32(extra.count) + extra
            records += record
            for (_, bytes) in channels { data += bytes }
        }
        var info = Self.u16(layers.count) + records + data
        if info.count % 2 == 1 { info.append(0) }
        let section = Self.u32(info.count) + info + Self.u32(0)
        let header = Array("8BPS".utf8) + Self.u16(1) + [UInt8](repeating: 0, count: 6) + Self.u16(3) + Self.u32(height) + Self.u32(width) + Self.u16(8) + Self.u16(3)
        return header + Self.u32(0) + Self.u32(0) + Self.u32(section.count) + section
    }
}
