import DeriveDigest
import Testing

/// HMAC-SHA256 over OpenSSL, against RFC 4231's test vectors.
struct HMACTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var number: Int
        var key: [UInt8]
        var message: [UInt8]
        var expected: String

        init(_ number: Int, _ key: [UInt8], _ message: [UInt8], _ expected: String) {
            (self.number, self.key, self.message, self.expected) = (number, key, message, expected)
        }

        var testDescription: String { "RFC 4231 test case \(number)" }
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    /// RFC 4231, section 4: the HMAC-SHA256 results of test cases 1 to 7 (case 5's truncated
    /// to 128 bits, as the RFC gives it).
    @Test(arguments: [
        Vector(1, Array(repeating: UInt8(0x0b), count: 20), Array("Hi There".utf8),
               "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        Vector(2, Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
               "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        Vector(3, Array(repeating: UInt8(0xaa), count: 20), Array(repeating: UInt8(0xdd), count: 50),
               "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        Vector(4, Array(UInt8(1)...UInt8(25)), Array(repeating: UInt8(0xcd), count: 50),
               "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        Vector(5, Array(repeating: UInt8(0x0c), count: 20), Array("Test With Truncation".utf8),
               "a3b6167473100ee06e0c796c2955552b"),
        Vector(6, Array(repeating: UInt8(0xaa), count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
               "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        Vector(7, Array(repeating: UInt8(0xaa), count: 131),
               Array(("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be "
                   + "hashed before being used by the HMAC algorithm.").utf8),
               "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ])
    func hmacSHA256MatchesRFC4231(_ vector: Vector) {
        let (key, message, expected) = (vector.key, vector.message, vector.expected)
        let code = HMACSHA256.authenticate(message, key: key)
        #expect(code.count == 32)
        #expect(HMACSHA256.hex(code).hasPrefix(expected) && expected.count >= 32)
        #expect(Array(code.prefix(expected.count / 2)) == Self.bytes(expected))
    }

    /// An empty key and an empty message are valid HMAC (OpenSSL 3.0 fails on a null key pointer, so none is passed).
    @Test func hmacOfEmptyKeyAndMessage() {
        #expect(HMACSHA256.hex(HMACSHA256.authenticate([], key: [])) == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }
}
