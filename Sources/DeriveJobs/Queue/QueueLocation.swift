import DeriveLanguage
import Foundation

/// Where the queue lives: a PostgreSQL server, or an SQLite file on this machine.
public enum QueueLocation: Sendable, Hashable, CustomStringConvertible {
    /// A `postgres://` or `postgresql://` URL, or a libpq `key=value` string.
    case postgres(String)
    case sqlite(path: String)

    /// With no server configured: an SQLite file in the working directory.
    public static let embeddedDefault = QueueLocation.sqlite(path: "derive.sqlite")

    /// `DERIVE_DATABASE_URL`, or the embedded default.
    public static func from(environment: [String: String]) throws(ValidationError) -> QueueLocation {
        guard let text = environment["DERIVE_DATABASE_URL"], !text.isEmpty else { return embeddedDefault }
        do {
            return try parse(text)
        } catch {
            throw ValidationError(location: "DERIVE_DATABASE_URL", reason: error.issues.map(\.reason).joined(separator: "; "))
        }
    }

    /// `postgres://…` and `postgresql://…` (and `host=… dbname=…` strings) are PostgreSQL;
    /// `sqlite:PATH` or a plain path is an SQLite file.
    public static func parse(_ text: String) throws(ValidationError) -> QueueLocation {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { throw ValidationError(location: "database", reason: "is empty") }
        if trimmed.hasPrefix("postgres://") || trimmed.hasPrefix("postgresql://") { return .postgres(trimmed) }
        if trimmed.contains("=") && !trimmed.contains("/") || trimmed.hasPrefix("host=") || trimmed.hasPrefix("dbname=") {
            return .postgres(trimmed)
        }
        if trimmed.hasPrefix("sqlite:") {
            let path = String(trimmed.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ValidationError(location: "database", reason: "sqlite: needs a file path, as in sqlite:derive.sqlite") }
            return .sqlite(path: path.hasPrefix("//") ? String(path.dropFirst(2)) : path)
        }
        if trimmed.contains("://") {
            throw ValidationError(location: "database", reason: "\(Quoted(Redacted.connectionString(trimmed))) is neither a postgres:// URL "
                                      + "nor an SQLite file (sqlite:PATH)")
        }
        return .sqlite(path: trimmed)
    }

    public var description: String {
        switch self {
        case .postgres(let url): "PostgreSQL \(Redacted.connectionString(url))"
        case .sqlite(let path): "SQLite \(path)"
        }
    }
}
