/// An 8-bit RGBA PNG written without compression (deflate's stored blocks): how pixels made in
/// pure Swift (a Photoshop document's composited layers) reach libvips through its ordinary,
/// safe PNG loader. The file is about `width × height × 4` bytes.
public enum StoredPNG {
    public static func rgba(_ pixels: [UInt8], width: Int, height: Int) -> [UInt8] {
        precondition(pixels.count == width * height * 4)
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        header += be32(width) + be32(height) + [8, 6, 0, 0, 0]
        chunk("IHDR", header, into: &out)
        // zlib: header, stored blocks of at most 65,535 bytes of filtered rows, Adler-32.
        let stride = width * 4 + 1
        let total = stride * height
        var z: [UInt8] = [0x78, 0x01]
        z.reserveCapacity(total + total / 65_535 * 5 + 16)
        var a: UInt32 = 1, b: UInt32 = 0
        var row = 0, column = 0           // position in the filtered stream
        var remaining = total
        while remaining > 0 || z.count == 2 {
            let n = min(remaining, 65_535)
            remaining -= n
            z += [remaining == 0 ? 1 : 0, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            for _ in 0..<n {
                let byte: UInt8 = column == 0 ? 0 : pixels[row * width * 4 + column - 1]
                z.append(byte)
                a = (a + UInt32(byte)) % 65_521
                b = (b + a) % 65_521
                column += 1
                if column == stride { column = 0; row += 1 }
            }
            if n == 0 { break }
        }
        z += be32(Int(b << 16 | a))
        chunk("IDAT", z, into: &out)
        chunk("IEND", [], into: &out)
        return out
    }

    static func be32(_ v: Int) -> [UInt8] { [UInt8((v >> 24) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8], into out: inout [UInt8]) {
        out += be32(data.count)
        let typed = Array(type.utf8) + data
        out += typed
        out += be32(Int(crc32(typed)))
    }

    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
