import DeriveLanguage
import DeriveJobs
import Foundation

/// The asset pages: a contact sheet of recent assets, and one asset with every derivative, its
/// faces and its sources.
extension Views {
    /// An output as a picture: its BlurHash drawn first (by the script, behind the image) so the
    /// sheet has its colours before the bytes arrive. Its attributes are the size it is shown at
    /// (within `maxWidth`×`maxHeight`), so its box has that size before the image loads and the
    /// placeholder fills it.
    /// The image is the output's thumbnail for `box` (`/derivatives/ID/thumbnail`), made at
    /// twice the size shown, not the output itself.
    static func picture(_ output: CatalogDerivative, alt: String, box: PictureBox) -> Markup {
        let record = output.record
        let shown = fitted(width: record.width, height: record.height, into: box.shown.width, box.shown.height)
        let image = "<img src=\"/derivatives/\(output.id)/thumbnail?box=\(box.rawValue)\" alt=\"\(HTML.escape(alt))\" loading=\"lazy\" decoding=\"async\" "
            + "width=\"\(shown.width)\" height=\"\(shown.height)\">"
        var attributes = [("class", "picture")]
        if let hash = record.blurhash, !hash.isEmpty { attributes.append(("data-blurhash", hash)) }
        return HTML.element("span", attributes, Markup(raw: image))
    }

    /// The newest assets, each with its narrowest current outputs.
    public static func assets(_ page: AssetPage, now: Date) -> String {
        guard !page.assets.isEmpty else { return HTML.page(title: "Assets", HTML.element("p", [], .text("No asset has been recorded yet."))) }
        let cards = Markup.join(page.assets.map { asset in
            let pictures = Markup.join(asset.outputs.map { picture($0, alt: "\($0.record.outputName) of asset \(asset.id)", box: .sheet) })
            let more = asset.outputCount > asset.outputs.count ? " (+\(asset.outputCount - asset.outputs.count) more)" : ""
            return HTML.element("figure", [("class", "asset")],
                HTML.element("a", [("href", "/assets/\(asset.id)")], HTML.element("div", [("class", "pictures")], pictures))
                + HTML.element("figcaption", [],
                    HTML.element("a", [("href", "/assets/\(asset.id)"), ("title", Redacted.url(asset.sourceURL))], .text(shortName(asset.sourceURL)))
                    + HTML.element("span", [("class", "note")],
                        .text(" \(asset.format) \(asset.width)×\(asset.height), \(asset.outputCount) output\(asset.outputCount == 1 ? "" : "s")\(more), "
                              + "\(duration(now.timeIntervalSince(asset.createdAt))) ago"))))
        })
        var content = HTML.element("div", [("id", "assets"), ("class", "sheet")], cards)
        if let next = page.next {
            content = content + HTML.element("p", [], HTML.element("a", [("href", "/assets?" + HTML.query([("before", String(next))])), ("rel", "next")], .text("Older →")))
        }
        return HTML.page(title: "Assets", content)
    }

    /// A source as a caption: the last part of its path (the whole URL is the link's title and
    /// on the asset's page).
    static func shortName(_ source: String) -> String {
        let redacted = Redacted.url(source)
        let path = URLComponents(string: redacted)?.path ?? redacted
        return path.split(separator: "/").last.map(String.init) ?? redacted
    }

    /// One asset: its facts, its faces drawn over an uncropped output, its sources' revalidation
    /// state, and every derivative by preset and version with the stale ones marked.
    public static func asset(_ asset: AssetDetail, now: Date) -> String {
        let record = asset.record
        var facts: [[Markup]] = [
            [.text("source"), .text(Redacted.url(record.sourceURL))], [.text("content"), .text(record.sha256)],
            [.text("format"), .text("\(record.format), \(record.width)×\(record.height)" + (record.pages > 1 ? ", \(record.pages) pages" : ""))],
            [.text("bytes"), .text(bytes(record.bytes))],
            [.text("colour"), .text([record.colorSpace, record.iccDescription].compactMap { $0 }.joined(separator: ", "))],
            [.text("recorded"), .text("\(timestamp(asset.createdAt)) (updated \(duration(now.timeIntervalSince(asset.updatedAt))) ago)")],
        ]
        if record.hasLocation { facts.append([.text("location"), .text("the source carries a GPS position")]) }
        // The tags and context the last job that named them gave the asset.
        if let tags = record.tags, !tags.isEmpty { facts.append([.text("tags"), .text(tagList(tags))]) }
        if let context = record.context, !context.isEmpty { facts.append([.text("context"), .text(contextList(context.map { ($0.key, $0.value) }))]) }
        var content = HTML.table(["", ""], facts, id: "facts")
        content = content + HTML.element("h2", [], .text("Faces")) + faces(asset)
        content = content + HTML.element("h2", [], .text("Sources")) + sources(asset.sources, now: now)
        content = content + HTML.element("h2", [], .text("Derivatives")) + derivatives(asset.derivatives)
        return HTML.page(title: "Asset #\(asset.id)", content)
    }

    /// The boxes the detector found, in source pixels, drawn over the widest output that is the
    /// whole source scaled (so the boxes land where they belong); over a blank frame of the
    /// source's shape when there is none.
    static func faces(_ asset: AssetDetail) -> Markup {
        guard let findings = asset.record.faces else {
            return HTML.element("p", [("class", "note")], .text("No job has looked for faces in this asset (only face and auto gravities and face effects look)."))
        }
        let width = max(1, asset.record.width), height = max(1, asset.record.height)
        let backdrop = asset.derivatives.filter { $0.supersededAt == nil && showsWholeFrame($0, sourceWidth: width, sourceHeight: height) }
            .max { $0.record.width < $1.record.width }
        var shapes = backdrop.map { "<image href=\"/derivatives/\($0.id)\" x=\"0\" y=\"0\" width=\"\(width)\" height=\"\(height)\"></image>" }
            ?? "<rect class=\"frame\" x=\"0\" y=\"0\" width=\"\(width)\" height=\"\(height)\"></rect>"
        let stroke = max(2, width / 250)
        for (index, face) in findings.faces.enumerated() {
            shapes += "<rect class=\"face\" x=\"\(face.box.x)\" y=\"\(face.box.y)\" width=\"\(face.box.width)\" height=\"\(face.box.height)\" "
                + "stroke-width=\"\(stroke)\"><title>face \(index + 1), score \(String(format: "%.2f", face.score))</title></rect>"
        }
        let surer = findings.cropFaces.count, unsure = findings.faces.count - surer
        let label = "\(surer) face\(surer == 1 ? "" : "s") found by \(findings.detector)"
            + (unsure == 0 ? "" : ", and \(unsure) below the crops' threshold that only privacy effects cover")
        let figure = Markup(raw: "<svg id=\"faces\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"\(HTML.escape(label))\">\(shapes)</svg>")
        let caption = label + (backdrop == nil ? "; no output shows the whole source, so the boxes are drawn on a blank frame of its shape" : "")
        return HTML.element("figure", [("class", "faces")], figure + HTML.element("figcaption", [("class", "note")], .text(caption)))
    }

    /// Whether an output is the whole source, only scaled: every step a resize that neither
    /// crops nor pads, and the same shape within half a percent.
    static func showsWholeFrame(_ output: CatalogDerivative, sourceWidth: Int, sourceHeight: Int) -> Bool {
        guard case .array(let steps)? = output.record.chain["chain"] else { return false }
        let scaledOnly = steps.allSatisfy { step in
            guard case .object(let members) = step, members.count == 1, members[0].key == "resize",
                  case .string(let mode)? = members[0].value["mode"], let known = ResizeMode(rawValue: mode) else { return false }
            return !known.crops && !known.pads
        }
        let source = Double(sourceWidth) / Double(sourceHeight), made = Double(output.record.width) / Double(max(1, output.record.height))
        return scaledOnly && abs(made / source - 1) < 0.005
    }

    static func sources(_ sources: [SourceRevalidation], now: Date) -> Markup {
        guard !sources.isEmpty else {
            return HTML.element("p", [("class", "note")], .text("No source URL holds this content now (it changed since, or it came as data)."))
        }
        let rows: [[Markup]] = sources.map { source in
            [.text(Redacted.url(source.url)), .text("\(source.version)"), .text(source.etag ?? "–"), .text(source.lastModified ?? "–"),
             .text("\(duration(now.timeIntervalSince(source.checkedAt))) ago"), .text("\(duration(now.timeIntervalSince(source.changedAt))) ago")]
        }
        return HTML.table(["URL", "content version", "ETag", "Last-Modified", "checked", "changed"], rows, id: "sources")
    }

    /// Derivatives grouped by preset and version (outputs named in the job itself last), newest
    /// first within a group.
    static func derivatives(_ derivatives: [CatalogDerivative]) -> Markup {
        guard !derivatives.isEmpty else { return HTML.element("p", [], .text("No derivative recorded.")) }
        func group(_ output: CatalogDerivative) -> String {
            guard let name = output.record.presetName else { return "Outputs named in the job" }
            return "Preset \(name)" + (output.record.presetVersion.map { " v\($0)" } ?? "")
        }
        var order: [String] = [], groups: [String: [CatalogDerivative]] = [:]
        for output in derivatives {
            let name = group(output)
            if groups[name] == nil { order.append(name) }
            groups[name, default: []].append(output)
        }
        order.sort { a, b in a.hasPrefix("Outputs") == b.hasPrefix("Outputs") ? a < b : !a.hasPrefix("Outputs") }
        return Markup.join(order.map { name in
            let rows: [[Markup]] = (groups[name] ?? []).map { output in
                let record = output.record
                return [picture(output, alt: record.outputName, box: .row), .text(record.outputName + (record.breakpointWidth.map { " @\($0)w" } ?? "")),
                        .text(record.format), .text("\(record.width)×\(record.height)"), .text(bytes(record.bytes)),
                        .text(record.quality.map(String.init) ?? "–"), HTML.link("/jobs/\(output.jobID)", "#\(output.jobID)"),
                        state(output)]
            }
            return HTML.element("h3", [], .text(name)) + HTML.table(["", "output", "format", "size", "bytes", "quality", "job", "state"], rows)
        })
    }

    static func state(_ output: CatalogDerivative) -> Markup {
        if let superseded = output.supersededAt {
            return HTML.element("span", [("class", "state-stale")], .text("superseded \(timestamp(superseded))"))
        }
        if output.isStale, let current = output.currentPresetVersion {
            return HTML.element("span", [("class", "state-stale")], .text("stale: the preset is at v\(current)"))
        }
        return HTML.element("span", [("class", "state-completed")], .text("current"))
    }
}
