import Foundation

/// A 3D colour lookup table (`l_lut:<file>`), read from the two formats Cloudinary takes:
/// Adobe/Resolve `.cube` (`LUT_3D_SIZE N`, then N³ lines of three numbers in the domain, red
/// changing fastest) and Autodesk/Lustre `.3dl` (an optional line of the N input levels, then
/// N³ lines of three integers, blue changing fastest, at the bit depth their largest value
/// implies). Applied to 8-bit RGB by trilinear interpolation.
public struct Lut3D: Sendable, Hashable {
    /// Points per axis (2–256).
    public let size: Int
    /// Output RGB, 0–1, at index (r + g·N + b·N²)·3.
    public let table: [Float]

    public init(size: Int, table: [Float]) {
        self.size = size
        self.table = table
    }

    /// The largest file read: a 65-point cube, the largest common writers make, is about 8 MiB
    /// of text, and a file this size already holds a table of some 30 MB.
    public static let maxBytes = 16 << 20

    /// Reads a `.cube` or `.3dl` file; the format by its extension, else by its content.
    public static func parse(_ bytes: [UInt8], name: String) throws(DeriveError) -> Lut3D {
        guard bytes.count <= maxBytes else {
            throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)) is \(bytes.count) bytes; l_lut reads at most \(maxBytes >> 20) MiB")
        }
        // Binary is refused before a text is made of it: reading a binary file as Latin-1 lines
        // cost about a second for 64 KiB (the image fuzzer's finding).
        if let offset = bytes.firstIndex(where: { $0 == 0x7F || ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D) }) {
            throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)) is not text (a control byte at offset \(offset))")
        }
        guard let text = String(bytes: bytes, encoding: .utf8) ?? String(bytes: bytes, encoding: .isoLatin1) else {
            throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)) is not text")
        }
        let lower = name.lowercased()
        if lower.hasSuffix(".3dl") { return try parse3dl(text, name: name) }
        if lower.hasSuffix(".cube") || text.contains("LUT_3D_SIZE") || text.contains("LUT_1D_SIZE") { return try parseCube(text, name: name) }
        return try parse3dl(text, name: name)
    }

    static func lines(_ text: String) -> [Substring] {
        text.split(whereSeparator: \.isNewline).map { $0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? "" }
            .map { $0.trimmingCharacters(in: .whitespaces)[...] }.filter { !$0.isEmpty }
    }

    static func parseCube(_ text: String, name: String) throws(DeriveError) -> Lut3D {
        var size: Int?
        var low: [Float] = [0, 0, 0], high: [Float] = [1, 1, 1]
        var values: [Float] = []
        for line in lines(text) {
            let fields = line.split(whereSeparator: \.isWhitespace)
            switch fields.first {
            case "TITLE": continue
            case "LUT_1D_SIZE", "LUT_1D_INPUT_RANGE":
                throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)) is a 1D LUT; l_lut takes 3D LUTs (LUT_3D_SIZE)")
            case "LUT_3D_SIZE":
                guard fields.count == 2, let n = Int(fields[1]), (2...256).contains(n) else {
                    throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)): LUT_3D_SIZE must be 2 to 256, got \(Quoted(String(line)))")
                }
                size = n
            case "DOMAIN_MIN", "DOMAIN_MAX", "LUT_3D_INPUT_RANGE":
                let numbers = fields.dropFirst().compactMap { Float($0) }
                if fields.first == "LUT_3D_INPUT_RANGE", numbers.count == 2 {
                    (low, high) = ([numbers[0], numbers[0], numbers[0]], [numbers[1], numbers[1], numbers[1]])
                } else if numbers.count == 3 {
                    if fields.first == "DOMAIN_MIN" { low = numbers } else { high = numbers }
                }
            default:
                let numbers = fields.compactMap { Float($0) }
                guard numbers.count == 3, fields.count == 3 else {
                    throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)): cannot read the line \(Quoted(String(line)))")
                }
                values += numbers
            }
        }
        guard let size else { throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)) has no LUT_3D_SIZE") }
        guard values.count == size * size * size * 3 else {
            throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)) has \(values.count / 3) entries; LUT_3D_SIZE \(size) needs \(size * size * size)")
        }
        // Outputs are in the domain too: scaled to 0–1.
        let table = values.enumerated().map { i, v in
            let c = i % 3
            return min(1, max(0, (v - low[c]) / max(1e-6, high[c] - low[c])))
        }
        return Lut3D(size: size, table: table)
    }

    static func parse3dl(_ text: String, name: String) throws(DeriveError) -> Lut3D {
        var rows: [[Int]] = []
        var mesh: Int?
        for line in lines(text) {
            let fields = line.split(whereSeparator: \.isWhitespace)
            let numbers = fields.compactMap { Int($0) }
            guard numbers.count == fields.count else {
                // Keywords some writers add (`3DMESH`, `Mesh 4 12`) carry nothing needed here.
                if ["3DMESH", "Mesh", "LUT8", "gamma"].contains(where: { line.hasPrefix($0) }) { continue }
                throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)): cannot read the line \(Quoted(String(line)))")
            }
            if numbers.count > 3, mesh == nil, rows.isEmpty {
                mesh = numbers.count
            } else if numbers.count == 3 {
                rows.append(numbers)
            } else {
                throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)): cannot read the line \(Quoted(String(line)))")
            }
        }
        let n = mesh ?? Int(cbrt(Double(rows.count)).rounded())
        guard (2...256).contains(n), rows.count == n * n * n else {
            throw DeriveError(.unsupportedFormat, "LUT \(Quoted(name)) has \(rows.count) entries, not a cube of 2 to 256 points per axis")
        }
        // The output depth: the smallest 2^k − 1 that holds the largest value (10, 12, 16 bits...).
        let largest = rows.lazy.flatMap { $0 }.max() ?? 1
        var depth = 255
        while depth < largest { depth = depth * 2 + 1 }
        var table = [Float](repeating: 0, count: n * n * n * 3)
        for (k, row) in rows.enumerated() {
            // Blue changes fastest in a .3dl; the table is indexed red-fastest.
            let (r, g, b) = (k / (n * n), (k / n) % n, k % n)
            let i = (r + g * n + b * n * n) * 3
            for c in 0..<3 { table[i + c] = Float(row[c]) / Float(depth) }
        }
        return Lut3D(size: n, table: table)
    }

    /// Maps 8-bit RGB (or RGBA, alpha kept) in place.
    public func apply(to pixels: inout [UInt8], bands: Int) {
        let n = size, scale = Float(n - 1) / 255
        pixels.withUnsafeMutableBufferPointer { p in
            table.withUnsafeBufferPointer { t in
                var i = 0
                while i + 2 < p.count {
                    let fr = Float(p[i]) * scale, fg = Float(p[i + 1]) * scale, fb = Float(p[i + 2]) * scale
                    let r0 = min(Int(fr), n - 2), g0 = min(Int(fg), n - 2), b0 = min(Int(fb), n - 2)
                    let dr = fr - Float(r0), dg = fg - Float(g0), db = fb - Float(b0)
                    for c in 0..<3 {
                        func at(_ r: Int, _ g: Int, _ b: Int) -> Float { t[(r + g * n + b * n * n) * 3 + c] }
                        let c00 = at(r0, g0, b0) * (1 - dr) + at(r0 + 1, g0, b0) * dr
                        let c10 = at(r0, g0 + 1, b0) * (1 - dr) + at(r0 + 1, g0 + 1, b0) * dr
                        let c01 = at(r0, g0, b0 + 1) * (1 - dr) + at(r0 + 1, g0, b0 + 1) * dr
                        let c11 = at(r0, g0 + 1, b0 + 1) * (1 - dr) + at(r0 + 1, g0 + 1, b0 + 1) * dr
                        let v = (c00 * (1 - dg) + c10 * dg) * (1 - db) + (c01 * (1 - dg) + c11 * dg) * db
                        p[i + c] = UInt8(min(255, max(0, (v * 255).rounded())))
                    }
                    i += bands
                }
            }
        }
    }
}
