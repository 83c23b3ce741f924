/// The style of a text layer in strings: `l_text:<font>_<size>[_<style>...]:<text>`, with its
/// colour (`co_`) and, for `_stroke`, the outline (`bo_<width>px_solid_<colour>`) beside it.
extension ParseRun {
    /// The `l_text` styles Derive reads (`letter_spacing_`, `line_spacing_` and `antialias_`
    /// with their values), for messages about the others.
    static let textStylesRead = ["bold", "italic", "normal", "underline", "strikethrough", "letter_spacing", "line_spacing",
                                 "left", "center", "right", "justify", "start", "end", "stroke", "antialias", "hinting"]

    /// Cloudinary's antialias modes that render glyphs in grey, as libvips always does: cairo
    /// draws text the same for each (only `none` and `subpixel` differ).
    static let greyAntialiasModes: Set<String> = ["default", "gray", "fast", "good", "best"]
    static let hintingModes: Set<String> = ["default", "none", "slight", "medium", "full"]

    /// `<font>_<size>[_<style>...]:<percent-encoded text>`.
    mutating func text(_ value: String, color: String?, border: String?, key: String = "l", in c: Component) -> TextLayer? {
        guard let colon = value.firstIndex(of: ":") else {
            fail(c, CloudinaryVocabulary.malformed(key + "_text:" + value, "a text layer gives its font and size, then its text: l_text:<font>_<size>:<text>", hint: ""))
            return nil
        }
        let written = key + "_text:" + value[..<colon]
        let style = value[..<colon].split(separator: "_", omittingEmptySubsequences: false).map(String.init)
        let encoded = String(value[value.index(after: colon)...])
        if value[..<colon].contains("$") {
            refuse(c, written, CloudinaryVocabulary.feature(.variable))
            return nil
        }
        guard let parts = textParts(encoded, in: c) else { return nil }
        guard style.count >= 2, let font = style[0].removingPercentEncoding, let size = Int(style[1]) else {
            if style.count == 1 {
                // Cloudinary reads a lone name as a text style saved as an asset of the account.
                refuse(c, written, CloudinaryVocabulary.feature(.savedTextStyle))
            } else {
                fail(c, CloudinaryVocabulary.malformed(written, "a text style is <font>_<size>[_<style>...], such as Arial_40_bold", hint: ""))
            }
            return nil
        }
        var layer = TextLayer(text: "", font: font, size: size)
        layer.parts = parts
        var unsupported: [String] = []
        var tokens = style.dropFirst(2)[...]
        while var token = tokens.popFirst() {
            // `letter_spacing_14`, `line_spacing_5`: a keyword of two words, then its value.
            if let next = tokens.first, CloudinaryVocabulary.cloudinaryTextStyles[token + "_" + next] != nil {
                token += "_" + next
                tokens.removeFirst()
            }
            switch token {
            case "underline": layer.underline = true
            case "strikethrough": layer.strikethrough = true
            case "letter_spacing", "line_spacing":
                guard let v = tokens.popFirst(), let n = Int(v) else {
                    fail(c, CloudinaryVocabulary.malformed(written, "\(token) takes whole pixels: \(token)_<n>", hint: ""))
                    return nil
                }
                if token == "letter_spacing" { layer.letterSpacing = n } else { layer.lineSpacing = n }
            case "left", "start": layer.alignment = .left
            case "center": layer.alignment = .center
            case "right", "end": layer.alignment = .right
            case "justify": layer.alignment = .justify
            case "stroke": layer.stroke = TextStroke(width: 0, color: .black)
            case "antialias":
                guard let mode = tokens.popFirst() else {
                    fail(c, CloudinaryVocabulary.malformed(written, "antialias takes a mode: antialias_<none|gray|subpixel|fast|good|best>", hint: ""))
                    return nil
                }
                if mode == "none" {
                    layer.antialias = false
                } else if Self.greyAntialiasModes.contains(mode) {
                    note(c, "\(written): antialias_\(mode) is grey antialiasing, which is how libvips renders text (cairo draws glyphs alike for default, gray, fast, good and best); it changes nothing")
                } else if mode == "subpixel" {
                    unsupported.append("antialias_subpixel")
                } else {
                    fail(c, CloudinaryVocabulary.unknown(written, what: "antialias mode \(Quoted(mode))", hint: "; Cloudinary's are none, gray, subpixel, fast, good and best"))
                    return nil
                }
            case "hinting":
                guard let mode = tokens.popFirst(), Self.hintingModes.contains(mode) else {
                    fail(c, CloudinaryVocabulary.malformed(written, "hinting takes a mode: hinting_<none|slight|medium|full>", hint: ""))
                    return nil
                }
                // Hinting snaps outlines to the pixel grid; libvips' text takes no hinting
                // setting (the machine's fontconfig decides, hintslight on Debian), so the text
                // is the same text at the same size, its stems placed within a pixel of the mode's.
                note(c, "\(written): hinting_\(mode) is not set: libvips renders text with the hinting the machine's fontconfig configures (hintslight on Debian); the text, its size and layout are the same, stems may differ by up to a pixel")
            case "bold": layer.bold = true
            case "italic": layer.italic = true
            case "normal": break
            default:
                if let takesValue = CloudinaryVocabulary.cloudinaryTextStyles[token] {
                    let value = takesValue ? tokens.popFirst().map { "_" + $0 } ?? "" : ""
                    unsupported.append(token + value)
                } else {
                    fail(c, CloudinaryVocabulary.unknown(written, what: "text style \(Quoted(token))",
                                                         hint: Suggest.hint(for: token, among: Array(CloudinaryVocabulary.cloudinaryTextStyles.keys) + Self.textStylesRead,
                                                                            else: "; Derive reads \(Self.textStylesRead.joined(separator: ", "))")))
                    return nil
                }
            }
        }
        if !unsupported.isEmpty {
            fail(c, CloudinaryVocabulary.notSupported(written, CloudinaryVocabulary.feature(.textStyle))
                 + " (here \(unsupported.joined(separator: ", ")))")
            return nil
        }
        if let color {
            guard let parsed = self.color(color, param: "co", in: c) else { return nil }
            layer.color = parsed
        }
        if layer.stroke != nil {
            guard let border else {
                fail(c, "\(written)_stroke: the stroke's width and colour are given by bo_<width>px_solid_<colour> beside l_text, as Cloudinary documents (l_text:Arial_50_stroke:Hi,bo_2px_solid_black)")
                return nil
            }
            guard let outline = self.border(border, in: c) else { return nil }
            guard outline.widthExpression == nil else {
                fail(c, param: "bo", "beside l_text with _stroke takes a width in whole pixels (bo_<n>px_solid_<colour>), got \(Quoted(border))")
                return nil
            }
            layer.stroke = TextStroke(width: outline.width, color: outline.color)
        }
        return layer
    }

    /// A blend mode on a layer placed on faces is refused in strings as in JSON.
    mutating func validateBlend(of overlay: Overlay, in c: Component) {
        for issue in StepRules.blendIssues(overlay) {
            fail(c, "\(overlay.blend!.cloudinaryText(level: nil)) with g_\(overlay.gravity?.token ?? "faces"): known to Cloudinary, not supported by Derive: \(issue.reason)")
        }
    }

    /// A text layer's settings checked as JSON's are, each refusal named by what wrote it:
    /// `bo_` for the stroke's width, the `l_text:` style for the rest.
    mutating func validateText(of overlay: Overlay, in c: Component) {
        guard case .text(let t) = overlay.source else { return }
        for issue in StepRules.textIssues(t, limits: limits) {
            let key = c.has("l") ? "l" : "u"
            let written = issue.field == "text.stroke.width" ? c.params["bo"].map { "bo_" + $0 } : c.params[key].map { key + "_" + $0 }
            if let bound = issue.bound, let written {
                fail(c, CloudinaryVocabulary.outOfRange(written, "\(issue.field) \(issue.reason)", bound: bound))
            } else if let written {
                fail(c, CloudinaryVocabulary.malformed(written, "\(issue.field) \(issue.reason)", hint: ""))
            } else {
                fail(c, "\(issue.field) \(issue.reason)")
            }
        }
    }
}
