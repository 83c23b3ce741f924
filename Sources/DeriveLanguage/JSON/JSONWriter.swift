/// Writes `JSONValue`s. `canonical` sorts keys by their UTF-8 bytes and adds no whitespace: it
/// is the exact text that identity hashes are computed over. `pretty` keeps member order for
/// people reading `derive explain` and reports.
public enum JSONWriter {
    public static func canonical(_ value: JSONValue) -> String {
        var out = ""
        write(value, into: &out, sorted: true, indent: nil, level: 0)
        return out
    }

    public static func compact(_ value: JSONValue) -> String {
        var out = ""
        write(value, into: &out, sorted: false, indent: nil, level: 0)
        return out
    }

    public static func pretty(_ value: JSONValue) -> String {
        var out = ""
        write(value, into: &out, sorted: false, indent: "  ", level: 0)
        return out
    }

    private static func write(_ value: JSONValue, into out: inout String, sorted: Bool, indent: String?, level: Int) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n.text
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            if elements.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { out += "," }
                newline(&out, indent, level + 1)
                write(element, into: &out, sorted: sorted, indent: indent, level: level + 1)
            }
            newline(&out, indent, level)
            out += "]"
        case .object(let members):
            if members.isEmpty {
                out += "{}"
                return
            }
            let ordered = sorted ? members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } : members
            out += "{"
            for (i, member) in ordered.enumerated() {
                if i > 0 { out += "," }
                newline(&out, indent, level + 1)
                writeString(member.key, into: &out)
                out += indent == nil ? ":" : ": "
                write(member.value, into: &out, sorted: sorted, indent: indent, level: level + 1)
            }
            newline(&out, indent, level)
            out += "}"
        }
    }

    private static func newline(_ out: inout String, _ indent: String?, _ level: Int) {
        guard let indent else { return }
        out += "\n"
        for _ in 0..<level { out += indent }
    }

    private static func writeString(_ string: String, into out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
