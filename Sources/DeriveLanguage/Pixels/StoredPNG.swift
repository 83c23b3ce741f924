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
        // The filtered rows (filter 0 before each), then zlib: header, stored blocks of at most
        // 65,535 bytes of them, Adler-32.
        let rowBytes = width * 4
        var filtered: [UInt8] = []
        filtered.reserveCapacity((rowBytes + 1) * height)
        for row in 0..<height {
            filtered.append(0)
            filtered.append(contentsOf: pixels[(row * rowBytes)..<((row + 1) * rowBytes)])
        }
        var z: [UInt8] = [0x78, 0x01]
        z.reserveCapacity(filtered.count + filtered.count / 65_535 * 5 + 16)
        var offset = 0
        repeat {
            let n = min(filtered.count - offset, 65_535)
            let last: UInt8 = offset + n == filtered.count ? 1 : 0
            z += [last, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            z.append(contentsOf: filtered[offset..<(offset + n)])
            offset += n
        } while offset < filtered.count
        z += be32(Int(adler32(filtered)))
        chunk("IDAT", z, into: &out)
        chunk("IEND", [], into: &out)
        return out
    }

    /// zlib's checksum: sums reduced modulo 65,521 once every 5,552 bytes, the most that cannot
    /// overflow 32 bits.
    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + 5_552)
            for i in start..<end {
                a &+= UInt32(bytes[i])
                b &+= a
            }
            a %= 65_521
            b %= 65_521
            start = end
        }
        return b << 16 | a
    }

    static func be32(_ v: Int) -> [UInt8] { [UInt8((v >> 24) & 0xFF), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8], into out: inout [UInt8]) {
        out += be32(data.count)
        let name = Array(type.utf8)
        out += name
        out += data
        out += be32(Int(crc32(data, after: crc32(name, finishing: false))))
    }

    static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    /// The CRC of `bytes` following a running value (`finishing: false` leaves it running, as
    /// the chunk's type and then its data are one CRC).
    static func crc32(_ bytes: [UInt8], after running: UInt32 = 0xFFFF_FFFF, finishing: Bool = true) -> UInt32 {
        var c = running
        table.withUnsafeBufferPointer { table in
            for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        }
        return finishing ? c ^ 0xFFFF_FFFF : c
    }
}
