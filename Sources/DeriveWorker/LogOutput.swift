import DeriveLanguage
import DeriveJobs
import Foundation
import Logging

/// Structured log lines on standard error: JSON objects (for log collectors) or `key=value`
/// text (for people), one per line, with the metadata the worker attaches (job id, attempt,
/// stage, timings). Sources are redacted before they are logged; credentials never are.
public struct LogOutput: LogHandler {
    public enum Format: String, Sendable, CaseIterable {
        case json, text
    }

    public var format: Format
    public var label: String
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let write: @Sendable (String) -> Void

    public init(label: String, format: Format, level: Logger.Level, write: @escaping @Sendable (String) -> Void = LogOutput.standardError) {
        self.label = label
        self.format = format
        self.logLevel = level
        self.write = write
    }

    public static let standardError: @Sendable (String) -> Void = { line in
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let level = event.level, message = event.message
        var all = metadata.merging(event.metadata ?? [:]) { $1 }
        if let error = event.error { all["error"] = .string("\(error)") }
        let time = Self.timestamp(Date())
        switch format {
        case .json:
            var members: [JSONMember] = [
                JSONMember(key: "time", value: .string(time)), JSONMember(key: "level", value: .string(level.rawValue)),
                JSONMember(key: "message", value: .string(message.description)),
            ]
            members += all.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: Self.json($0.value)) }
            write(JSONWriter.compact(.object(members)))
        case .text:
            let pairs = all.sorted { $0.key < $1.key }.map { "\($0.key)=\(Self.text($0.value))" }
            write(([time, level.rawValue, message.description] + pairs).joined(separator: " "))
        }
    }

    static func json(_ value: Logger.Metadata.Value) -> JSONValue {
        switch value {
        case .string(let text): return .string(text)
        case .stringConvertible(let convertible):
            if let number = convertible as? any BinaryInteger { return .number(JSONNumber(text: "\(number)")) }
            if let number = convertible as? Double, number.isFinite { return .decimal(number) }
            if let flag = convertible as? Bool { return .bool(flag) }
            return .string(convertible.description)
        case .array(let values): return .array(values.map(json))
        case .dictionary(let values): return .object(values.sorted { $0.key < $1.key }.map { JSONMember(key: $0.key, value: json($0.value)) })
        }
    }

    static func text(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return text.contains(" ") || text.contains("=") || text.isEmpty ? JSONWriter.compact(.string(text)) : text
        default: return JSONWriter.compact(json(value))
        }
    }

    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
