import DeriveLanguage
import DeriveJobs
import Foundation

/// HTML text, built only from escaped strings and markup written here: every value that comes
/// from a job, a source, an error or a preset goes through `escape` (or `Markup.text`), so a
/// `<script>` in a source URL or an error detail is shown as text.
public struct Markup: Sendable, CustomStringConvertible {
    public let description: String

    /// Markup written by Derive itself.
    init(raw: String) {
        description = raw
    }

    /// A value shown as text.
    static func text(_ value: String) -> Markup {
        Markup(raw: HTML.escape(value))
    }

    static func + (a: Markup, b: Markup) -> Markup {
        Markup(raw: a.description + b.description)
    }

    static func join(_ parts: [Markup], separator: String = "") -> Markup {
        Markup(raw: parts.map(\.description).joined(separator: separator))
    }
}

public enum HTML {
    /// Escapes the five characters that can end a text or an attribute value.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }

    /// A query string from name and value pairs (nil values left out), percent-encoded.
    public static func query(_ items: [(String, String?)]) -> String {
        var components = URLComponents()
        components.queryItems = items.compactMap { name, value in value.map { URLQueryItem(name: name, value: $0) } }
        // `+` means a space to form decoders: encode it.
        return (components.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B")
    }

    /// `<tag>` around text; `attributes` are escaped too.
    static func element(_ tag: String, _ attributes: [(String, String)] = [], _ content: Markup) -> Markup {
        let rendered = attributes.map { " \($0.0)=\"\(escape($0.1))\"" }.joined()
        return Markup(raw: "<\(tag)\(rendered)>\(content.description)</\(tag)>")
    }

    static func link(_ href: String, _ text: String) -> Markup {
        element("a", [("href", href)], .text(text))
    }

    /// A table of text cells (already markup where a cell holds a link), in a box that scrolls
    /// sideways on its own when the table is wider than the screen (the page itself never does).
    static func table(_ header: [String], _ rows: [[Markup]], id: String? = nil) -> Markup {
        let head = Markup.join(header.map { element("th", [], .text($0)) })
        let body = Markup.join(rows.map { row in element("tr", [], Markup.join(row.map { element("td", [], $0) })) })
        let thead = header.allSatisfy(\.isEmpty) ? Markup(raw: "") : element("thead", [], element("tr", [], head))
        return element("div", [("class", "scroll")], element("table", id.map { [("id", $0)] } ?? [], thead + element("tbody", [], body)))
    }

    /// The page around `content`: the navigation, the stylesheet and the script, all served
    /// by Derive itself (no CDN; the Content-Security-Policy allows nothing else).
    /// `notice`: what the action that led here did (`Notice`), shown above the content.
    static func page(title: String, notice: Notice? = nil, _ content: Markup) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title)) · Derive</title>
        <link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/static/dashboard.css">
        <script src="/static/dashboard.js" defer></script>
        </head>
        <body>
        <nav><strong>Derive</strong><a href="/">Overview</a><a href="/jobs">Jobs</a><a href="/queues">Queues</a><a href="/totals">Totals</a><a href="/failures">Failures</a><a href="/assets">Assets</a><a href="/presets">Presets</a><a href="/schedules">Schedules</a><a href="/webhooks">Webhooks</a></nav>
        <main>
        <h1>\(escape(title))</h1>
        \(notice.map { element("p", [("class", $0.warning ? "notice warning" : "notice"), ("role", "status"), ("id", "notice")], .text($0.text)).description } ?? "")\
        \(content.description)
        </main>
        </body>
        </html>

        """
    }
}

/// Ages and durations as `derive status` shows them.
func duration(_ seconds: Double) -> String { humanDuration(seconds) }

/// A run's length: to the millisecond under a minute (a job's run time), else as ages are.
func elapsed(_ seconds: Double) -> String {
    seconds < 60 ? String(format: "%.3f s", max(0, seconds)) : humanDuration(seconds)
}

/// `2026-11-23T22:44:06.318Z`: a job's start and finish, to the millisecond.
func preciseTimestamp(_ date: Date) -> String { date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)) }

/// `2026-11-23T22:44:06Z`: a time as the pages show it (a format style, not a formatter made
/// per row: a page of jobs shows a hundred times).
func timestamp(_ date: Date) -> String { date.formatted(.iso8601) }

/// "2.4 MB": sizes for people.
func bytes(_ count: Int) -> String {
    if count < 1000 { return "\(count) B" }
    if count < 1_000_000 { return String(format: "%.1f kB", Double(count) / 1000) }
    return String(format: "%.1f MB", Double(count) / 1_000_000)
}
