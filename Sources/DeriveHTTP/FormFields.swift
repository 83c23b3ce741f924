/// `application/x-www-form-urlencoded` fields, parsed as the WHATWG URL standard's
/// urlencoded parser does: it never fails. A `%` not followed by two hex digits stays as it
/// is, `+` is a space, bytes that are not UTF-8 become U+FFFD, and a name without `=` has an
/// empty value. Foundation's `URLComponents.percentEncodedQuery` setter traps on such input
/// (a space, a lone `%`, a newline): a request body must never reach a trap.
public enum FormFields {
    /// Each name's last value (a form repeats a name only for lists, which Derive's forms do not send).
    public static func parse(_ body: some Collection<UInt8>) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in pairs(body) { fields[name] = value }
        return fields
    }

    /// Every name and value in order, repeats kept.
    public static func pairs(_ body: some Collection<UInt8>) -> [(String, String)] {
        body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true).map { sequence in
            let equals = sequence.firstIndex(of: UInt8(ascii: "="))
            let name = equals.map { sequence[..<$0] } ?? sequence[...]
            let value = equals.map { sequence[sequence.index(after: $0)...] } ?? sequence[sequence.endIndex...]
            return (decode(name), decode(value))
        }
    }

    /// `+` to a space, then percent-decoding of well-formed escapes only.
    static func decode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%"), index + 2 < input.count,
               let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2]) {
                output.append(high << 4 | low)
                index += 3
                continue
            }
            output.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
