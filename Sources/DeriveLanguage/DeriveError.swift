/// Every failure Derive reports, classified so a worker knows whether trying again can help.
/// Messages name the input and the fix; they never carry credentials.
public struct DeriveError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The job, chain or plan is invalid (a `ValidationError`'s issues).
        case invalidJob = "invalid_job"
        /// Not an image format Derive recognises by its bytes, or one it cannot write.
        case unsupportedFormat = "unsupported_format"
        /// A libvips loader the configuration does not allow (SVG, PDF, ImageMagick...).
        case blockedLoader = "blocked_loader"
        /// Truncated or corrupt image data.
        case corruptImage = "corrupt_image"
        /// More bytes, pixels or frames than the limits allow.
        case limitExceeded = "limit_exceeded"
        case decodeFailed = "decode_failed"
        case encodeFailed = "encode_failed"
        /// The source could not be fetched for now (connection, timeout, 5xx, 429).
        case sourceUnavailable = "source_unavailable"
        /// The source will not become fetchable by retrying (refused address, 4xx, scheme).
        case sourceRefused = "source_refused"
        case storageFailed = "storage_failed"
        case databaseUnavailable = "database_unavailable"
        /// Released at shutdown or by a lost lease; not the job's fault.
        case interrupted
        case internalError = "internal_error"

        /// Whether the same input can succeed later. Bad input never does.
        public var isRetryableByDefault: Bool {
            switch self {
            case .sourceUnavailable, .storageFailed, .databaseUnavailable, .interrupted, .internalError: true
            default: false
            }
        }
    }

    public var code: Code
    public var detail: String
    public var isRetryable: Bool
    /// Seconds the origin asked to wait (`Retry-After`) before trying again.
    public var retryAfter: Double?
    /// The source does not exist (HTTP 404 or 410, no such S3 key or file), as opposed to being
    /// refused or unreachable: what an output's default image (`d_`) stands in for.
    public var sourceMissing = false

    /// A source that does not exist: refused (retrying will not make it appear), and marked so.
    public static func missing(_ detail: String) -> DeriveError {
        var error = DeriveError(.sourceRefused, detail)
        error.sourceMissing = true
        return error
    }

    public init(_ code: Code, _ detail: String, retryable: Bool? = nil, retryAfter: Double? = nil) {
        self.code = code
        self.detail = detail
        self.isRetryable = retryable ?? code.isRetryableByDefault
        self.retryAfter = retryAfter
    }

    public init(_ error: ValidationError) {
        self.init(.invalidJob, error.description)
    }

    public var description: String { "\(code.rawValue): \(detail)" }

    /// The same error, its detail saying which part of the job it came from
    /// (`outputs[1] "card": …`, `overlay "logo.png": …`).
    public func prefixed(_ context: String) -> DeriveError {
        var copy = self
        copy.detail = "\(context): \(detail)"
        return copy
    }
}
