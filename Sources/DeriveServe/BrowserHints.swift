import DeriveLanguage
import Foundation

/// What a delivery request says about the browser that sent it, reduced to the few classes a
/// cache needs to tell apart: the modern formats its `Accept` names (AVIF, WebP, JPEG XL),
/// `Save-Data`, and the client hints `Sec-CH-Width`/`Width` and `Sec-CH-DPR`/`DPR`. Malformed
/// or absent headers read as "nothing said" (a JPEG-only browser, no hint), never as an error.
public struct BrowserHints: Sendable, Equatable {
    /// The modern image formats the request's `Accept` lists by name with a non-zero q
    /// (`image/avif`, `image/webp`, `image/jxl`). Wildcards (`image/*`, `*/*`) name none: every
    /// browser sends them, including those that show only JPEG, PNG and GIF. So a CDN's cache
    /// key can be these few classes instead of the whole header.
    public var formats: Set<OutputFormat>
    /// `Save-Data: on`.
    public var saveData: Bool
    /// The image's layout width in device pixels (`Sec-CH-Width`, else `Width`), 1 to 16384.
    public var width: Int?
    /// The device pixel ratio (`Sec-CH-DPR`, else `DPR`), above 0 and at most 10.
    public var dpr: Double?

    public init(formats: Set<OutputFormat> = [], saveData: Bool = false, width: Int? = nil, dpr: Double? = nil) {
        self.formats = formats
        self.saveData = saveData
        self.width = width
        self.dpr = dpr
    }

    /// The hints of a request, given a header lookup (names in any case).
    public init(header: (String) -> String?) {
        formats = Self.acceptedFormats(header("Accept") ?? "")
        saveData = header("Save-Data").map { $0.trimmingCharacters(in: .whitespaces).lowercased() == "on" } ?? false
        width = (header("Sec-CH-Width") ?? header("Width")).flatMap(Self.number).flatMap { value in
            value >= 1 && value <= 16384 ? Int(value.rounded(.up)) : nil
        }
        dpr = (header("Sec-CH-DPR") ?? header("DPR")).flatMap(Self.number).flatMap { $0 > 0 && $0 <= 10 ? $0 : nil }
    }

    /// The formats an `Accept` value names, q=0 (refused) left out. Only the first 4 KB is
    /// read, and at most 64 media ranges.
    public static func acceptedFormats(_ accept: String) -> Set<OutputFormat> {
        var found: Set<OutputFormat> = []
        for range in accept.utf8.prefix(4096).split(separator: UInt8(ascii: ",")).prefix(64) {
            let parameters = range.split(separator: UInt8(ascii: ";")).map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parameters.first else { continue }
            let format: OutputFormat? = switch type {
            case "image/avif": .avif
            case "image/webp": .webp
            case "image/jxl": .jxl
            default: nil
            }
            guard let format else { continue }
            let q = parameters.dropFirst().first { $0.hasPrefix("q=") }.map { Double($0.dropFirst(2)) ?? 1 } ?? 1
            if q > 0 { found.insert(format) }
        }
        return found
    }

    /// A decimal number as client hints write them (`2`, `1.5`, `" 412 "`); nil otherwise.
    static func number(_ text: String) -> Double? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 12, trimmed.allSatisfy({ $0.isASCIIDigit || $0 == "." }),
              let value = Double(trimmed), value.isFinite else { return nil }
        return value
    }
}

/// The parts of a delivery URL's transformation that depend on the request, found by reading
/// the text (the language is not asked: this runs before a caller is known to be authorised).
public struct DeliveryDependencies: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `f_auto`: the format is chosen among those the browser's `Accept` allows.
    public static let format = DeliveryDependencies(rawValue: 1)
    /// `q_auto` without a level: `Save-Data: on` makes it `q_auto:eco`.
    public static let saveData = DeliveryDependencies(rawValue: 2)
    /// `w_auto[:<step>[:<fallback>]]`: the width from the Width client hint.
    public static let width = DeliveryDependencies(rawValue: 4)
    /// `dpr_auto`: the density from the DPR client hint.
    public static let density = DeliveryDependencies(rawValue: 8)

    /// What `transformation` (as written in the URL) depends on.
    public static func of(_ transformation: String) -> DeliveryDependencies {
        var found: DeliveryDependencies = []
        for component in transformation.split(separator: "/") {
            for part in component.split(separator: ",") {
                if part == "f_auto" || part.hasPrefix("f_auto:") { found.insert(.format) }
                if part == "q_auto" { found.insert(.saveData) }
                if part == "w_auto" || part.hasPrefix("w_auto:") { found.insert(.width) }
                if part == "dpr_auto" { found.insert(.density) }
            }
        }
        return found
    }

    /// The request headers the answer varies by (`Vary`).
    public var vary: [String] {
        var names: [String] = []
        if contains(.format) { names.append("Accept") }
        if contains(.saveData) { names.append("Save-Data") }
        if contains(.width) { names += ["Sec-CH-Width", "Width"] }
        if contains(.density) { names += ["Sec-CH-DPR", "DPR"] }
        return names
    }

    /// The client hints to ask the browser for (`Accept-CH`), when the URL reads any.
    public var acceptCH: String? {
        var names: [String] = []
        if contains(.width) { names += ["Sec-CH-Width", "Width"] }
        if contains(.density) { names += ["Sec-CH-DPR", "DPR"] }
        return names.isEmpty ? nil : names.joined(separator: ", ")
    }
}

/// One request's reading of a transformation that depends on it: `w_auto` and `dpr_auto` made
/// concrete from the client hints (rounded, so the variants stay few), `q_auto` made
/// `q_auto:eco` under `Save-Data`, and `f_auto`'s candidate formats from `Accept`.
public enum DeliveryVariant {
    /// The largest density `dpr_auto` delivers, as the batch reading's densities (1, 2, 3).
    public static let maxDensity = 3

    /// `transformation` with its request-dependent parts made concrete for `hints`.
    /// - `w_auto[:<step>[:<fallback>]]` becomes `w_<n>`: the Width hint rounded up to the step
    ///   (100 unless given) and at most the image's width; without a hint the fallback
    ///   (rounded up to the step), and without one the image's own width (the part is removed).
    ///   `w_auto:breakpoints` is refused: a delivery is one image.
    /// - `dpr_auto` becomes `dpr_<n>`: the DPR hint rounded up to a whole number, 1 to 3; 1
    ///   (the part removed) without a hint, or beside `w_auto` (whose hint counts device pixels).
    /// - `q_auto` becomes `q_auto:eco` with `Save-Data: on`.
    public static func rewrite(_ transformation: String, hints: BrowserHints, imageWidth: Int) throws -> String {
        var components: [String] = []
        for component in transformation.split(separator: "/", omittingEmptySubsequences: false) {
            let parts = component.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            let hasAutoWidth = parts.contains { $0 == "w_auto" || $0.hasPrefix("w_auto:") }
            var kept: [String] = []
            for part in parts {
                if part == "w_auto" || part.hasPrefix("w_auto:") {
                    let fields = part.dropFirst(2).split(separator: ":", omittingEmptySubsequences: false).dropFirst()
                    if fields.first?.hasPrefix("breakpoints") == true {
                        throw ServeError(400, "\(part) in a delivery URL: a delivery is one image; use w_auto or w_auto:<step>[:<fallback>]")
                    }
                    guard fields.count <= 2, fields.allSatisfy({ !$0.isEmpty && $0.count <= 5 && $0.allSatisfy(\.isASCIIDigit) }),
                          let step = fields.isEmpty ? 100 : Int(fields[fields.startIndex]), step > 0 else {
                        throw ServeError(400, "\(part): w_auto takes w_auto[:<step>[:<fallback>]], whole numbers")
                    }
                    let fallback = fields.count == 2 ? fields.last.flatMap { Int($0) } : nil
                    if let width = hints.width ?? fallback {
                        let rounded = (width + step - 1) / step * step
                        kept.append("w_\(max(1, min(rounded, imageWidth)))")
                    }
                } else if part == "dpr_auto" {
                    let density = hasAutoWidth ? 1 : min(maxDensity, max(1, Int((hints.dpr ?? 1).rounded(.up))))
                    if density > 1 { kept.append("dpr_\(density)") }
                } else if part == "q_auto" && hints.saveData {
                    kept.append("q_auto:eco")
                } else {
                    kept.append(part)
                }
            }
            if !kept.isEmpty || parts.isEmpty { components.append(kept.joined(separator: ",")) }
        }
        return components.joined(separator: "/")
    }

    /// The formats `f_auto` may choose among for a browser that accepts `accepted` (modern
    /// formats named in `Accept`), in the deployment's order: the deployment's `f_auto` formats
    /// that it accepts, and those every browser shows (JPEG, PNG, GIF). With no format that
    /// holds alpha among them, PNG is added for an image that may have alpha; for an animation
    /// only the formats that animate are kept (GIF at the least).
    public static func candidates(accepted: Set<OutputFormat>, autoFormats: [OutputFormat], animated: Bool, mayHaveAlpha: Bool) -> [OutputFormat] {
        let modern: Set<OutputFormat> = [.avif, .webp, .jxl], universal: Set<OutputFormat> = [.jpeg, .png, .gif]
        var formats = autoFormats.filter { $0.isConcrete && (universal.contains($0) || (modern.contains($0) && accepted.contains($0))) }
        if animated {
            formats = formats.filter(\.canAnimate)
            if !formats.contains(.gif) { formats.append(.gif) }
            return formats
        }
        if formats.isEmpty { formats = [.jpeg] }
        if mayHaveAlpha, !formats.contains(where: { $0 != .jpeg && $0 != .gif && $0.supportsAlpha }) { formats.append(.png) }
        return formats
    }
}
