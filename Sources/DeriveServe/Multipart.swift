import DeriveHTTP

/// A `multipart/form-data` body (RFC 7578), parsed within bounds and without a trap: every
/// index is checked, a malformed body is a `MultipartError` that says what is wrong, never a
/// crash. Text parts become fields; the part named `file` with a filename is the upload's
/// bytes (without a filename it is a field too: a URL or a `data:` URI, as the SDKs send them).
public struct MultipartForm: Sendable {
    public var fields: [String: String] = [:]
    /// Every value of a field whose name ends in `[]` (how the SDKs send a list), in order.
    public var lists: [String: [String]] = [:]
    public var file: [UInt8]?
    public var filename: String?

    /// At most this many parts, and this many bytes of headers in one part.
    public static let maxParts = 100
    public static let maxHeaderBytes = 8 * 1024

    /// The boundary a `Content-Type` value names (1 to 70 characters, possibly quoted), nil when
    /// it is not `multipart/form-data` or has none.
    public static func boundary(contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = parts.first, first.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parts.dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            guard parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            var value = parameter[parameter.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard (1...70).contains(value.utf8.count), value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F || $0 == 0x20 }) else { return nil }
            return value
        }
        return nil
    }

    public static func parse(_ body: [UInt8], boundary: String) throws(MultipartError) -> MultipartForm {
        let delimiter = Array(("--" + boundary).utf8)
        var form = MultipartForm()
        // The first delimiter starts the body or a line (anything before it is a preamble).
        guard var position = find(delimiter, in: body, from: 0) else { throw MultipartError("no part starts with the boundary") }
        var parts = 0
        while true {
            position += delimiter.count
            // `--` after a delimiter ends the body.
            if position + 1 < body.count, body[position] == UInt8(ascii: "-"), body[position + 1] == UInt8(ascii: "-") { return form }
            // Transport padding, then the line break.
            while position < body.count, body[position] == UInt8(ascii: " ") || body[position] == UInt8(ascii: "\t") { position += 1 }
            guard let afterBreak = lineBreak(in: body, at: position) else { throw MultipartError("a boundary is not followed by a line break") }
            position = afterBreak
            parts += 1
            guard parts <= maxParts else { throw MultipartError("more than \(maxParts) parts") }
            // Headers up to the empty line.
            var headers: [String: String] = [:]
            while true {
                guard let end = findLineEnd(in: body, from: position, limit: maxHeaderBytes) else {
                    throw MultipartError("a part's headers do not end (or are longer than \(maxHeaderBytes) bytes)")
                }
                let line = body[position..<end.lineEnd]
                position = end.next
                if line.isEmpty { break }
                guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw MultipartError("a part header has no colon") }
                let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased()
                let value = String(decoding: line[line.index(after: colon)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
                headers[name] = value
                guard headers.count <= 20 else { throw MultipartError("a part has more than 20 headers") }
            }
            // The content runs to the line break before the next delimiter.
            guard let next = find(delimiter, in: body, from: position) else { throw MultipartError("the last part is not closed by the boundary") }
            var contentEnd = next
            if contentEnd >= position + 2, body[contentEnd - 2] == 0x0D, body[contentEnd - 1] == 0x0A { contentEnd -= 2 }
            else if contentEnd >= position + 1, body[contentEnd - 1] == 0x0A { contentEnd -= 1 }
            let content = body[position..<max(position, contentEnd)]
            guard let disposition = headers["content-disposition"] else { throw MultipartError("a part has no Content-Disposition") }
            let parameters = dispositionParameters(disposition)
            guard let name = parameters["name"], !name.isEmpty else { throw MultipartError("a part has no name") }
            if name == "file", let filename = parameters["filename"] {
                form.file = Array(content)
                form.filename = filename
            } else {
                form.fields[name] = String(decoding: content, as: UTF8.self)
                if name.hasSuffix("[]") { form.lists[name, default: []].append(String(decoding: content, as: UTF8.self)) }
            }
            position = next
        }
    }

    /// `form-data; name="x"; filename="y"`'s parameters (quoted or not; `\"` inside quotes).
    static func dispositionParameters(_ value: String) -> [String: String] {
        var result: [String: String] = [:]
        let scalars = Array(value.unicodeScalars)
        var index = 0
        // Skips the disposition type.
        while index < scalars.count, scalars[index] != ";" { index += 1 }
        while index < scalars.count {
            index += 1  // the semicolon
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
            var name = ""
            while index < scalars.count, scalars[index] != "=", scalars[index] != ";" { name.unicodeScalars.append(scalars[index]); index += 1 }
            guard index < scalars.count, scalars[index] == "=" else { continue }
            index += 1
            var parameter = ""
            if index < scalars.count, scalars[index] == "\"" {
                index += 1
                while index < scalars.count, scalars[index] != "\"" {
                    if scalars[index] == "\\", index + 1 < scalars.count { index += 1 }
                    parameter.unicodeScalars.append(scalars[index])
                    index += 1
                }
                index += 1
                while index < scalars.count, scalars[index] != ";" { index += 1 }
            } else {
                while index < scalars.count, scalars[index] != ";" { parameter.unicodeScalars.append(scalars[index]); index += 1 }
            }
            result[name.trimmingCharacters(in: .whitespaces).lowercased()] = parameter.trimmingCharacters(in: .whitespaces)
        }
        return result
    }

    /// The index after CRLF or LF at `position`, nil when there is none.
    static func lineBreak(in body: [UInt8], at position: Int) -> Int? {
        if position + 1 < body.count, body[position] == 0x0D, body[position + 1] == 0x0A { return position + 2 }
        if position < body.count, body[position] == 0x0A { return position + 1 }
        return nil
    }

    /// The end of the line starting at `from` (before CRLF or LF) and the start of the next,
    /// looking at most `limit` bytes ahead.
    static func findLineEnd(in body: [UInt8], from: Int, limit: Int) -> (lineEnd: Int, next: Int)? {
        var index = from
        let end = min(body.count, from &+ limit)
        while index < end {
            if body[index] == 0x0A {
                let lineEnd = index > from && body[index - 1] == 0x0D ? index - 1 : index
                return (lineEnd, index + 1)
            }
            index += 1
        }
        return nil
    }

    /// The first `needle` at or after `from` that starts the body or a line.
    static func find(_ needle: [UInt8], in body: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, from >= 0, body.count >= needle.count else { return nil }
        let first = needle[0], last = body.count - needle.count
        var index = from
        while index <= last {
            if body[index] == first, index == 0 || body[index - 1] == 0x0A {
                var matched = true
                for offset in 1..<needle.count where body[index + offset] != needle[offset] {
                    matched = false
                    break
                }
                if matched { return index }
            }
            index += 1
        }
        return nil
    }
}

public struct MultipartError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
