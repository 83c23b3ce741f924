import Foundation

/// URLs for messages and logs: user-info and query strings (signed URLs, tokens) removed.
public enum Redacted {
    public static func url(_ text: String) -> String {
        guard var components = URLComponents(string: text), components.scheme != nil else {
            return text.count > 200 ? String(text.prefix(200)) + "…" : text
        }
        if components.user != nil || components.password != nil {
            components.user = nil
            components.password = nil
        }
        let hadQuery = components.query != nil
        components.query = nil
        components.fragment = nil
        let base = components.string ?? text
        return hadQuery ? base + "?…" : base
    }

    /// A database connection string for messages: the user and host stay (they help find the
    /// problem), the password goes, whether in a URL or a `key=value` string.
    public static func connectionString(_ text: String) -> String {
        if text.contains("://") {
            guard var components = URLComponents(string: text) else { return "(unparseable connection URL)" }
            if components.password != nil { components.password = "***" }
            components.queryItems = components.queryItems?.map { item in
                item.name.lowercased() == "password" ? URLQueryItem(name: item.name, value: "***") : item
            }
            return components.string ?? "(unparseable connection URL)"
        }
        return text.split(separator: " ").map { pair in
            pair.lowercased().hasPrefix("password=") ? "password=***" : String(pair)
        }.joined(separator: " ")
    }
}
