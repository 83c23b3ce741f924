@testable import DeriveLanguage
import DeriveTestSupport
import Testing

/// The EXIF attribution reader follows both byte orders, inline and offset values, and never
/// traps on a damaged block: truncated, mutated or random input gives nil or a value.
@Suite struct ExifAttributionTests {
    /// An EXIF block in either byte order with the given IFD0 entries (tag, type, bytes).
    static func block(bigEndian: Bool, prefix: Bool = true, _ entries: [(UInt16, UInt16, [UInt8])]) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? u16(v >> 16) + u16(v & 0xFFFF) : u16(v & 0xFFFF) + u16(v >> 16) }
        var tiff: [UInt8] = (bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]) + u16(42) + u32(8) + u16(entries.count)
        let dataStart = 8 + 2 + entries.count * 12 + 4
        var data: [UInt8] = []
        for (tag, type, value) in entries {
            tiff += u16(Int(tag)) + u16(Int(type)) + u32(value.count)
            if value.count <= 4 {
                tiff += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                tiff += u32(dataStart + data.count)
                data += value
            }
        }
        tiff += u32(0) + data
        return (prefix ? ExifAttribution.exifPrefix : []) + tiff
    }

    static let sample: [(UInt16, UInt16, [UInt8])] = [
        (0x010F, 2, Array("Camera\0".utf8)),
        (0x013B, 2, Array("Ada\0".utf8)),  // four bytes: inline
        (0x8298, 2, Array("Marsel Minga\0Editor\0".utf8)),
    ]

    @Test(arguments: [false, true], [false, true])
    func readsBothByteOrders(bigEndian: Bool, prefix: Bool) throws {
        let read = try #require(ExifAttribution(exif: Self.block(bigEndian: bigEndian, prefix: prefix, Self.sample)))
        #expect(read.artist == Array("Ada\0".utf8))
        #expect(read.copyright == Array("Marsel Minga\0Editor\0".utf8))
        #expect(read.copyrightText == "Marsel Minga" && read.artistText == "Ada")
    }

    @Test func writtenBlockReadsBackAndHoldsNothingElse() throws {
        let read = try #require(ExifAttribution(exif: Self.block(bigEndian: true, Self.sample)))
        let written = try #require(read.exifBlock)
        #expect(ExifAttribution(exif: written) == read)
        #expect(!written.indices.dropLast(5).contains { Array(written[$0..<$0 + 6]) == Array("Camera".utf8) })
        // Only the copyright: one entry, and the writer keeps a 5-byte value at an even offset.
        let single = try #require(ExifAttribution(copyright: Array("Mara\0".utf8)).exifBlock)
        #expect(single.count == 6 + 8 + 2 + 12 + 4 + 6)
        #expect(ExifAttribution(exif: single)?.copyright == Array("Mara\0".utf8) && ExifAttribution(exif: single)?.artist == nil)
        #expect(ExifAttribution().exifBlock == nil)
    }

    @Test func rejectsWhatItCannotFollow() {
        #expect(ExifAttribution(exif: []) == nil)
        #expect(ExifAttribution(exif: ExifAttribution.exifPrefix) == nil)
        #expect(ExifAttribution(exif: Array("Exif\0\0XX*\0\u{8}\0\0\0".utf8)) == nil, "neither II nor MM")
        #expect(ExifAttribution(exif: [0x49, 0x49, 0x2B, 0x00, 8, 0, 0, 0, 0, 0]) == nil, "not 42")
        // No attribution tags, or only in another type (a Copyright stored as UNDEFINED).
        #expect(ExifAttribution(exif: Self.block(bigEndian: false, [(0x010F, 2, Array("Camera\0".utf8))])) == nil)
        #expect(ExifAttribution(exif: Self.block(bigEndian: false, [(0x8298, 7, Array("Marsel\0".utf8))])) == nil)
        // An IFD0 offset past the end; an entry count larger than the block holds.
        #expect(ExifAttribution(exif: [0x49, 0x49, 0x2A, 0x00, 0xFF, 0xFF, 0xFF, 0xFF]) == nil)
        var counted = Self.block(bigEndian: false, Self.sample)
        counted[6 + 8] = 0xFF
        counted[6 + 9] = 0xFF
        #expect(ExifAttribution(exif: counted) == nil)
        // A value offset outside the block skips that tag and keeps the other.
        var outside = Self.block(bigEndian: false, Self.sample)
        let copyrightEntry = 6 + 8 + 2 + 2 * 12
        for i in 0..<4 { outside[copyrightEntry + 8 + i] = 0xFF }
        #expect(ExifAttribution(exif: outside) == ExifAttribution(artist: Array("Ada\0".utf8)))
        // A count so large that offset + count overflows 32 bits.
        var huge = Self.block(bigEndian: false, Self.sample)
        for i in 0..<4 { huge[copyrightEntry + 4 + i] = 0xFF }
        #expect(ExifAttribution(exif: huge)?.copyright == nil)
    }

    /// Every truncation and thousands of random mutations and random blocks: never a trap
    /// (which would end the test process), and whatever reads writes a block that reads the same.
    @Test func survivesTruncatedMutatedAndRandomBlocks() {
        var random = SeededRandom(seed: 0xE81F)
        let valid = Self.block(bigEndian: false, Self.sample) + Self.block(bigEndian: true, prefix: false, Self.sample)
        var read = 0
        for length in 0...valid.count {
            let result = ExifAttribution(exif: Array(valid.prefix(length)))
            if let result { read += 1; #expect(ExifAttribution(exif: result.exifBlock ?? []) == result) }
        }
        #expect(read > 0 && read < valid.count + 1, "a whole block reads, a cut one does not: \(read)")
        for _ in 0..<5000 {
            var mutated = valid
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                mutated[Int.random(in: 0..<mutated.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            if let result = ExifAttribution(exif: mutated) { #expect(ExifAttribution(exif: result.exifBlock ?? []) == result) }
        }
        for _ in 0..<2000 {
            let header: [UInt8] = random.chance(0.5) ? [0x49, 0x49, 0x2A, 0x00] : [0x4D, 0x4D, 0x00, 0x2A]
            let noise = (0..<Int.random(in: 0...200, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            if let result = ExifAttribution(exif: header + noise) { #expect(ExifAttribution(exif: result.exifBlock ?? []) == result) }
        }
    }
}
