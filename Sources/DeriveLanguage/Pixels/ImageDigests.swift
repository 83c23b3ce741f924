import Foundation

/// Pixels handed to the pure metadata algorithms: 8-bit, interleaved, 3 (RGB) or 4 (RGBA) bands.
public struct PixelBuffer: Sendable {
    public var width: Int
    public var height: Int
    public var bands: Int
    public var pixels: [UInt8]

    public init(width: Int, height: Int, bands: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * bands, "pixel buffer size does not match its dimensions")
        self.width = width
        self.height = height
        self.bands = bands
        self.pixels = pixels
    }

    func rgb(_ x: Int, _ y: Int) -> (Int, Int, Int) {
        let i = (y * width + x) * bands
        return bands >= 3 ? (Int(pixels[i]), Int(pixels[i + 1]), Int(pixels[i + 2])) : (Int(pixels[i]), Int(pixels[i]), Int(pixels[i]))
    }

    func alpha(_ x: Int, _ y: Int) -> Int {
        bands == 4 || bands == 2 ? Int(pixels[(y * width + x) * bands + bands - 1]) : 255
    }
}

/// BlurHash (https://blurha.sh): a 20–30 character placeholder that a client decodes into a
/// blurred preview while the image loads.
public enum BlurHash {
    static let characters = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~")

    public static func encode(_ image: PixelBuffer, componentsX: Int = 4, componentsY: Int = 3) -> String {
        var factors: [(Double, Double, Double)] = []
        let linear = (0...255).map { sRGBToLinear($0) }
        for j in 0..<componentsY {
            for i in 0..<componentsX {
                let normalisation = (i == 0 && j == 0) ? 1.0 : 2.0
                var r = 0.0, g = 0.0, b = 0.0
                for y in 0..<image.height {
                    let cy = cos(Double.pi * Double(j) * Double(y) / Double(image.height))
                    for x in 0..<image.width {
                        let basis = cos(Double.pi * Double(i) * Double(x) / Double(image.width)) * cy
                        let (pr, pg, pb) = image.rgb(x, y)
                        r += basis * linear[pr]
                        g += basis * linear[pg]
                        b += basis * linear[pb]
                    }
                }
                let scale = normalisation / Double(image.width * image.height)
                factors.append((r * scale, g * scale, b * scale))
            }
        }
        let dc = factors[0]
        let ac = factors.dropFirst()
        var hash = encode83((componentsX - 1) + (componentsY - 1) * 9, length: 1)
        let maximumValue: Double
        if let actualMax = ac.map({ max(abs($0.0), abs($0.1), abs($0.2)) }).max() {
            let quantisedMax = max(0, min(82, Int(floor(actualMax * 166 - 0.5))))
            maximumValue = Double(quantisedMax + 1) / 166
            hash += encode83(quantisedMax, length: 1)
        } else {
            maximumValue = 1
            hash += encode83(0, length: 1)
        }
        hash += encode83((linearToSRGB(dc.0) << 16) + (linearToSRGB(dc.1) << 8) + linearToSRGB(dc.2), length: 4)
        for factor in ac {
            func quantise(_ value: Double) -> Int {
                max(0, min(18, Int(floor(signPow(value / maximumValue, 0.5) * 9 + 9.5))))
            }
            hash += encode83(quantise(factor.0) * 19 * 19 + quantise(factor.1) * 19 + quantise(factor.2), length: 2)
        }
        return hash
    }

    static func encode83(_ value: Int, length: Int) -> String {
        var result = ""
        for i in 1...length {
            var divisor = 1
            for _ in 0..<(length - i) { divisor *= 83 }
            result.append(characters[(value / divisor) % 83])
        }
        return result
    }

    static func sRGBToLinear(_ value: Int) -> Double {
        let v = Double(value) / 255
        return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4)
    }

    static func linearToSRGB(_ value: Double) -> Int {
        let v = max(0, min(1, value))
        return v <= 0.0031308 ? Int(v * 12.92 * 255 + 0.5) : Int((1.055 * pow(v, 1 / 2.4) - 0.055) * 255 + 0.5)
    }

    static func signPow(_ value: Double, _ exponent: Double) -> Double {
        (value < 0 ? -1 : 1) * pow(abs(value), exponent)
    }
}

/// A 64-bit difference hash (dHash) of a 9x8 grayscale reduction: bit n is set where a pixel
/// is darker than its right-hand neighbour. Near-identical images (re-encoded, resized) differ
/// in few bits, so the Hamming distance finds duplicates.
public enum DifferenceHash {
    public static let width = 9
    public static let height = 8

    /// `gray` is 9x8 luminance, row by row.
    public static func hash(gray: [UInt8]) -> String {
        precondition(gray.count == width * height, "a difference hash needs 9x8 luminance values")
        var bits: UInt64 = 0
        for y in 0..<height {
            for x in 0..<(width - 1) {
                bits <<= 1
                if gray[y * width + x] < gray[y * width + x + 1] { bits |= 1 }
            }
        }
        let hex = String(bits, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    public static func distance(_ a: String, _ b: String) -> Int? {
        guard let x = UInt64(a, radix: 16), let y = UInt64(b, radix: 16) else { return nil }
        return (x ^ y).nonzeroBitCount
    }
}

/// The most common colour, by counting pixels in 4096 buckets (4 bits per channel) and averaging
/// the fullest bucket; transparent pixels do not count.
public enum DominantColor {
    public static func of(_ image: PixelBuffer) -> Color {
        var counts = [Int](repeating: 0, count: 4096)
        var sums = [(Int, Int, Int)](repeating: (0, 0, 0), count: 4096)
        for y in 0..<image.height {
            for x in 0..<image.width where image.alpha(x, y) >= 128 {
                let (r, g, b) = image.rgb(x, y)
                let bucket = (r >> 4) << 8 | (g >> 4) << 4 | (b >> 4)
                counts[bucket] += 1
                sums[bucket].0 += r
                sums[bucket].1 += g
                sums[bucket].2 += b
            }
        }
        guard let best = counts.indices.max(by: { counts[$0] < counts[$1] }), counts[best] > 0 else { return .transparent }
        let n = counts[best]
        return Color(red: UInt8(sums[best].0 / n), green: UInt8(sums[best].1 / n), blue: UInt8(sums[best].2 / n))
    }
}

/// The colour of an image's edges, for e_make_transparent without co_: Cloudinary takes as
/// background 'all pixels that resemble the pixels on the edges of the image'. Each channel's
/// median over the opaque edge pixels, so a subject touching one edge does not tint it.
public enum EdgeColor {
    /// `edges`: the edge pixels in any order (one row is enough).
    public static func of(_ edges: PixelBuffer) -> Color? {
        var channels: [[Int]] = [[], [], []]
        for y in 0..<edges.height {
            for x in 0..<edges.width where edges.alpha(x, y) >= 128 {
                let (r, g, b) = edges.rgb(x, y)
                channels[0].append(r)
                channels[1].append(g)
                channels[2].append(b)
            }
        }
        guard !channels[0].isEmpty else { return nil }
        let median = channels.map { values in UInt8(values.sorted()[values.count / 2]) }
        return Color(red: median[0], green: median[1], blue: median[2])
    }
}

/// Reads the description of an ICC profile ("Adobe RGB (1998)", "Display P3").
public enum ICCProfile {
    public static func description(_ profile: [UInt8]) -> String? {
        let b = Bytes(profile)
        guard let count = b.u32be(128), count < 1000 else { return nil }
        for i in 0..<count {
            let entry = 132 + i * 12
            guard b.string(at: entry, count: 4) == "desc", let offset = b.u32be(entry + 4), let size = b.u32be(entry + 8) else { continue }
            switch b.string(at: offset, count: 4) {
            case "desc":
                guard let length = b.u32be(offset + 8), length > 0, length <= size, b.has(offset + 12, length) else { return nil }
                let text = profile[(offset + 12)..<(offset + 12 + length)].prefix { $0 != 0 }
                return String(decoding: text, as: UTF8.self)
            case "mluc":
                guard let records = b.u32be(offset + 8), records > 0, let length = b.u32be(offset + 20),
                      let start = b.u32be(offset + 24), b.has(offset + start, length) else { return nil }
                var units: [UInt16] = []
                for j in stride(from: 0, to: length - 1, by: 2) {
                    units.append(UInt16(profile[offset + start + j]) << 8 | UInt16(profile[offset + start + j + 1]))
                }
                return String(decoding: units, as: UTF16.self).trimmingCharacters(in: .controlCharacters)
            default:
                return nil
            }
        }
        return nil
    }
}

/// libvips spells EXIF fields as `value (value, type, n components, n bytes)`.
public enum ExifText {
    public static func value(_ text: String) -> String? {
        let clean: (Substring) -> String? = { part in
            let trimmed = part.trimmingCharacters(in: .whitespacesAndNewlines.union(.controlCharacters))
            return trimmed.isEmpty ? nil : trimmed
        }
        guard let suffix = text.range(of: #", [A-Za-z ]+, \d+ components?, \d+ bytes?\)$"#, options: .regularExpression) else {
            return clean(Substring(text))
        }
        // What is left is "V (V": the value, then the same value again.
        let rest = text[..<suffix.lowerBound]
        let half = (rest.count - 2) / 2
        if rest.count >= 2, (rest.count - 2) % 2 == 0, rest.prefix(half) == rest.suffix(half),
           rest.dropFirst(half).hasPrefix(" (") {
            return clean(rest.prefix(half))
        }
        guard let open = rest.range(of: " (", options: .backwards) else { return clean(rest) }
        return clean(rest[..<open.lowerBound])
    }
}
