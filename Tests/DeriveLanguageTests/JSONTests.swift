@testable import DeriveLanguage
import DeriveTestSupport
import Testing

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValueKeepingNumberLexemes() throws {
        let value = try JSONParser().parse(#"{"a": [1, 1.0, -2.5e3, true, false, null, "x\u00e9\n\ud83d\ude00"], "b": {}}"#)
        guard case .object(let members) = value, case .array(let items)? = value["a"] else {
            Issue.record("expected an object with an array")
            return
        }
        #expect(members.map(\.key) == ["a", "b"])
        #expect(items[0] == .number(JSONNumber(text: "1")))
        #expect(items[1] == .number(JSONNumber(text: "1.0")))
        #expect(JSONNumber(text: "1").isInteger && !JSONNumber(text: "1.0").isInteger)
        #expect(items[2] == .number(JSONNumber(text: "-2.5e3")))
        #expect(items[3] == .bool(true) && items[4] == .bool(false) && items[5] == .null)
        #expect(items[6] == .string("xé\n😀"))
    }

    @Test(arguments: [
        ("{\"a\": 1,}", 1, 9, "unexpected '}'; expected a quoted key"),
        ("{\"a\": 1, \"a\": 2}", 1, 10, "duplicate key \"a\""),
        ("[1, 2", 1, 6, "unexpected end of input; expected ',' or ']'"),
        ("{\n  \"w\": 01\n}", 2, 9, "invalid number; leading zeros are not allowed"),
        ("\"tab\there\"", 1, 5, "control character in string; escape it"),
        ("[\"\\ud800\"]", 1, 9, "lone high surrogate in \\u escape"),
        ("{} x", 1, 4, "unexpected 'x' after the document"),
        ("tru", 1, 1, "invalid literal; expected true"),
        ("", 1, 1, "unexpected end of input; expected a value"),
    ])
    func reportsLineColumnAndReason(text: String, line: Int, column: Int, reason: String) {
        #expect(throws: JSONParseError(line: line, column: column, reason: reason)) {
            try JSONParser().parse(text)
        }
    }

    @Test func refusesNestingDeeperThanTheLimitWithoutRecursingForever() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser().parse(deep) }
        let ok = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(throws: Never.self) { try JSONParser().parse(ok) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONParser().parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONParseError.self) { try JSONParser().parse([0x22, 0xE0, 0x80, 0x80, 0x22]) }
    }

    @Test func canonicalWriterSortsKeysAndEscapes() throws {
        let value = try JSONParser().parse(#"{"b": 1, "a": {"d": "q\"\u0001", "c": [true, null]}}"#)
        #expect(JSONWriter.canonical(value) == #"{"a":{"c":[true,null],"d":"q\"\u0001"},"b":1}"#)
        #expect(try JSONParser().parse(JSONWriter.pretty(value)) == value)
    }

    @Test(arguments: [(0.5, "0.5"), (2.0, "2"), (-1.25, "-1.25"), (1.0 / 3, "0.333333"), (1e-9, "0"), (-0.0000004, "0"), (16.0 / 9, "1.777778")])
    func decimalsAreFixedPointWithSixPlaces(value: Double, text: String) {
        #expect(Decimal6.string(value) == text)
    }
}

@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func matchesTheFIPSVectors(input: String, digest: String) {
        #expect(SHA256.hex(input) == digest)
    }

    @Test func streamingInPiecesEqualsHashingAtOnce() {
        let data = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var hasher = SHA256()
        var offset = 0
        var size = 1
        while offset < data.count {
            let end = min(data.count, offset + size)
            hasher.update(data[offset..<end])
            offset = end
            size = size * 3 % 257 + 1
        }
        #expect(hasher.finalizeHex() == SHA256.hex(data))
        #expect(SHA256.hex(Array(repeating: UInt8(ascii: "a"), count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }
}
