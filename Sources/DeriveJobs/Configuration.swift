import DeriveLanguage
import Foundation

/// Derive's settings from `DERIVE_*` environment variables (and the standard `AWS_*` ones),
/// with safe defaults. Every malformed value is reported with the variable's name.
public struct Configuration: Sendable {
    public var engine: EngineSettings
    public var fetch: FetchSettings
    public var store: StoreSettings
    /// The disk cache of fetched sources: off unless a folder is given.
    public var cache: (directory: URL, maxBytes: Int)?
    /// Where overlay names (`l_logo`) are found: a URL prefix or a folder.
    public var overlayBase: String?
    /// The queue: PostgreSQL, or the embedded SQLite file.
    public var database: QueueLocation
    public var worker: WorkerEnvironment

    public static func load(_ environment: [String: String] = ProcessInfo.processInfo.environment,
                            workingDirectory: URL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)) throws(ValidationError) -> Configuration {
        let env = Environment(environment)
        // Relative paths resolve inside it, which needs a directory URL (a trailing slash).
        let workingDirectory = URL(fileURLWithPath: workingDirectory.path, isDirectory: true)

        var limits = SourceLimits()
        limits.maxInputBytes = env.int("DERIVE_MAX_INPUT_BYTES", limits.maxInputBytes)
        limits.maxInputPixels = env.int("DERIVE_MAX_INPUT_PIXELS", limits.maxInputPixels)
        limits.maxFrames = env.int("DERIVE_MAX_FRAMES", limits.maxFrames)
        limits.maxAnimationPixels = env.int("DERIVE_MAX_ANIMATION_PIXELS", limits.maxAnimationPixels)
        var loaders: Set<UntrustedLoader> = []
        for name in env.list("DERIVE_ALLOW_LOADERS") {
            if let loader = UntrustedLoader(rawValue: name.lowercased()) {
                loaders.insert(loader)
            } else {
                env.fail("DERIVE_ALLOW_LOADERS", "unknown loader \(Quoted(name)); allowable: \(UntrustedLoader.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        var faces = FaceDetectionSettings(enabled: env.bool("DERIVE_FACE_DETECTION", true),
                                          shortSide: env.int("DERIVE_FACE_DETECTION_SIZE", FaceDetectionSettings.defaultShortSide))
        faces.profile = env.bool("DERIVE_FACE_PROFILE", false)
        faces.decodeTwice = env.bool("DERIVE_FACE_DECODE_TWICE", true)
        if !(200...4000).contains(faces.shortSide) {
            env.fail("DERIVE_FACE_DETECTION_SIZE", "must be 200–4000 pixels, got \(faces.shortSide)")
            faces.shortSide = FaceDetectionSettings.defaultShortSide
        }
        if env["DERIVE_FACE_DETECTION_LONG_SIDE"] != nil {
            let side = env.int("DERIVE_FACE_DETECTION_LONG_SIDE", FaceDetectionSettings.defaultCanvas.width)
            if (256...4096).contains(side) {
                faces.canvas = FaceDetectionSettings.squareCanvas(side)
            } else {
                env.fail("DERIVE_FACE_DETECTION_LONG_SIDE", "must be 256–4096 pixels, got \(side)")
            }
        }
        if let text = env["DERIVE_FACE_DETECTION_CANVAS"] {
            let sides = text.lowercased().split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
            if sides.count == 2, let w = sides[0], let h = sides[1], (256...4096).contains(w), (256...4096).contains(h), w % 32 == 0, h % 32 == 0 {
                faces.canvas = Size(w, h)
            } else {
                env.fail("DERIVE_FACE_DETECTION_CANVAS", "must be WIDTHxHEIGHT, each 256–4096 and a multiple of 32 (such as 768x576), got \(Quoted(text))")
            }
        }
        if let name = env["DERIVE_FACE_DETECTOR"] {
            if let choice = FaceDetectorChoice(rawValue: name.lowercased()) {
                faces.detector = choice
            } else {
                env.fail("DERIVE_FACE_DETECTOR", "unknown detector \(Quoted(name)); allowable: \(FaceDetectorChoice.allCases.map(\.rawValue).joined(separator: ", "))")
            }
        }
        var autoFormats: [OutputFormat] = []
        for name in env.list("DERIVE_AUTO_FORMATS") {
            if let format = OutputFormat.parse(name), format.isAutoCandidate {
                if !autoFormats.contains(format) { autoFormats.append(format) }
            } else {
                env.fail("DERIVE_AUTO_FORMATS", "unknown format \(Quoted(name)); allowable: jpeg, png, webp, avif, gif, jxl, tiff")
            }
        }
        let maxEncodes = env.int("DERIVE_QUALITY_MAX_ENCODES", EngineSettings.defaultQualityMaxEncodes)
        if maxEncodes < 1 { env.fail("DERIVE_QUALITY_MAX_ENCODES", "must be 1 or more, got \(maxEncodes)") }
        var engine = EngineSettings(concurrency: env.int("DERIVE_VIPS_CONCURRENCY", 0), allowedLoaders: loaders, sourceLimits: limits,
                                    faces: faces, qualityMaxEncodes: max(1, maxEncodes),
                                    autoFormats: autoFormats.isEmpty ? EngineSettings.defaultAutoFormats : autoFormats)
        // DERIVE_AVIF_EFFORT, DERIVE_WEBP_EFFORT, ...: the encoder effort (0–9) of outputs that
        // give none; default `EngineSettings.defaultEfforts`.
        for format in EngineSettings.effortFormats {
            let name = "DERIVE_\(format.rawValue.uppercased())_EFFORT"
            guard env[name] != nil else { continue }
            let effort = env.int(name, format.canonicalEffort)
            if (0...9).contains(effort) {
                engine.efforts[format] = effort
            } else {
                env.fail(name, "must be 0–9, got \(effort)")
            }
        }

        let store = Self.store(env, workingDirectory: workingDirectory)
        var s3 = Self.s3(env)
        if case .s3(let bucket, _) = store.location {
            if s3 == nil { env.fail("DERIVE_STORE", "an s3:// store needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY") }
            s3?.bucket = bucket
        }

        var fetch = FetchSettings(s3: s3)
        fetch.maxBytes = limits.maxInputBytes
        fetch.connectTimeout = env.seconds("DERIVE_FETCH_CONNECT_TIMEOUT", fetch.connectTimeout)
        fetch.totalTimeout = env.seconds("DERIVE_FETCH_TIMEOUT", fetch.totalTimeout)
        fetch.stallTimeout = env.seconds("DERIVE_FETCH_STALL_TIMEOUT", fetch.stallTimeout)
        fetch.maxRedirects = env.int("DERIVE_FETCH_MAX_REDIRECTS", fetch.maxRedirects)
        fetch.attempts = max(1, env.int("DERIVE_FETCH_ATTEMPTS", fetch.attempts))
        fetch.maxRetryAfter = env.seconds("DERIVE_FETCH_MAX_RETRY_AFTER", fetch.maxRetryAfter)
        fetch.userAgent = env["DERIVE_FETCH_USER_AGENT"] ?? fetch.userAgent
        fetch.addressPolicy = env.parse { () throws(ValidationError) in try AddressPolicy.parse(env["DERIVE_FETCH_ALLOW"] ?? "") } ?? AddressPolicy()
        if let inline = env["DERIVE_FETCH_HOSTS"] {
            fetch.hosts = env.parse { () throws(ValidationError) in try FetchSettings.hosts(json: inline) } ?? [:]
        } else if let path = env["DERIVE_FETCH_HOSTS_FILE"] {
            if let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) {
                fetch.hosts = env.parse { () throws(ValidationError) in try FetchSettings.hosts(json: text) } ?? [:]
            } else {
                env.fail("DERIVE_FETCH_HOSTS_FILE", "cannot read \(path)")
            }
        }
        fetch.fileRoots = env.list("DERIVE_FILE_ROOTS", separators: ",:").map { URL(fileURLWithPath: $0, relativeTo: workingDirectory).standardizedFileURL }
        // Originals that `derive submit` and `derive upload` put in a folder store are read
        // back from it.
        if case .folder(let root) = store.location, !fetch.fileRoots.contains(root) { fetch.fileRoots.append(root) }
        if let buckets = env["DERIVE_S3_SOURCE_BUCKETS"] { fetch.s3SourceBuckets = Set(Environment.split(buckets, separators: ", ")) }

        var cache: (URL, Int)?
        if let folder = env["DERIVE_CACHE_DIR"] {
            cache = (URL(fileURLWithPath: folder, relativeTo: workingDirectory).standardizedFileURL, env.int("DERIVE_CACHE_MAX_BYTES", 1 << 30))
        }
        let database = env.parse { () throws(ValidationError) in try QueueLocation.from(environment: environment) } ?? QueueLocation.embeddedDefault
        let worker = WorkerEnvironment(env)
        try env.finish()
        return Configuration(engine: engine, fetch: fetch, store: store, cache: cache, overlayBase: env["DERIVE_OVERLAY_BASE"],
                             database: database, worker: worker)
    }

    static func s3(_ env: Environment) -> S3Settings? {
        guard let key = env["AWS_ACCESS_KEY_ID"], let secret = env["AWS_SECRET_ACCESS_KEY"] else { return nil }
        let region = env["DERIVE_S3_REGION"] ?? env["AWS_REGION"] ?? env["AWS_DEFAULT_REGION"] ?? "us-east-1"
        let custom = env["DERIVE_S3_ENDPOINT"]
        if let custom, URL(string: custom)?.scheme == nil {
            env.fail("DERIVE_S3_ENDPOINT", "must be a URL such as https://s3.eu-west-1.amazonaws.com, got \(Quoted(custom))")
        }
        return S3Settings(endpoint: custom ?? "https://s3.\(region).amazonaws.com", region: region, accessKey: key, secretKey: secret,
                          sessionToken: env["AWS_SESSION_TOKEN"], pathStyle: env.bool("DERIVE_S3_PATH_STYLE", custom != nil),
                          multipartThreshold: env.int("DERIVE_S3_MULTIPART_THRESHOLD", 16 << 20),
                          partSize: env.int("DERIVE_S3_PART_SIZE", 8 << 20))
    }

    static func store(_ env: Environment, workingDirectory: URL) -> StoreSettings {
        let template = env["DERIVE_KEY_TEMPLATE"].flatMap { text in env.parse { () throws(ValidationError) in try KeyTemplate(text) } } ?? .default
        let location = env.parse { () throws(ValidationError) in try StoreLocation.parse(env["DERIVE_STORE"] ?? "derived", workingDirectory: workingDirectory) }
            ?? .folder(workingDirectory.appendingPathComponent("derived"))
        return StoreSettings(location: location, publicBaseURL: env["DERIVE_STORE_PUBLIC_URL"],
                             cacheControl: env["DERIVE_CACHE_CONTROL"] ?? StoreSettings.defaultCacheControl, keyTemplate: template,
                             abandonedAfter: env.seconds("DERIVE_ABANDONED_AFTER", AbandonedWrites.defaultAge))
    }
}

/// Where outputs go.
public enum StoreLocation: Sendable, Hashable, CustomStringConvertible {
    case folder(URL)
    case s3(bucket: String, prefix: String)

    /// `s3://bucket/prefix`, `file:///path`, or a path (relative to the working directory).
    public static func parse(_ text: String, workingDirectory: URL) throws(ValidationError) -> StoreLocation {
        let workingDirectory = URL(fileURLWithPath: workingDirectory.path, isDirectory: true)
        if text.lowercased().hasPrefix("s3://") {
            let rest = text.dropFirst(5)
            let bucket = rest.prefix { $0 != "/" }
            guard S3Settings.isValidBucket(String(bucket)) else {
                throw ValidationError(location: "DERIVE_STORE", reason: "an S3 store is s3://bucket[/prefix] with a bucket name of 3 to 63 lowercase letters, digits, dots and hyphens, got \(Quoted(text))")
            }
            return .s3(bucket: String(bucket), prefix: String(rest.dropFirst(bucket.count).drop { $0 == "/" }))
        }
        if text.lowercased().hasPrefix("file://") {
            guard let url = URL(string: text), url.isFileURL else {
                throw ValidationError(location: "DERIVE_STORE", reason: "\(Quoted(text)) is not a file URL")
            }
            return .folder(url.standardizedFileURL)
        }
        if text.contains("://") {
            throw ValidationError(location: "DERIVE_STORE", reason: "stores are a folder, file:///path or s3://bucket/prefix, got \(Quoted(text))")
        }
        return .folder(URL(fileURLWithPath: text, relativeTo: workingDirectory).standardizedFileURL)
    }

    public var description: String {
        switch self {
        case .folder(let url): url.path
        case .s3(let bucket, let prefix): "s3://\(bucket)/\(prefix)"
        }
    }
}

/// `derive work`'s settings from the environment (its flags override them).
public struct WorkerEnvironment: Sendable, Hashable {
    /// `DERIVE_QUEUES`: the queues to work, comma-separated.
    public var queues: [String] = ["default"]
    /// `DERIVE_SLOTS`: jobs at once; nil means one per core.
    public var slots: Int?
    /// `DERIVE_LEASE`: seconds a claimed job is leased for.
    public var lease: Double = 60
    /// `DERIVE_GRACE`: seconds in-flight jobs get to finish after SIGTERM.
    public var grace: Double = 30
    /// `DERIVE_RESCUE_INTERVAL`: seconds between looks for expired leases (and status reports).
    public var rescueInterval: Double = 5
    /// `DERIVE_SCHEDULER_INTERVAL`: seconds between looks at the schedules; 0 turns this
    /// worker's scheduler off.
    public var schedulerInterval: Double = 15
    /// `DERIVE_ABANDONED_SWEEP_INTERVAL`: seconds between a worker's removals of abandoned and
    /// unrecorded writes from the store (the first comes within a minute of starting); 0
    /// turns them off.
    public var abandonedSweepInterval: Double = 3600
    /// `DERIVE_SUPERSEDED_OUTPUTS`: `keep` (marked superseded) or `delete` outputs a newer
    /// preset version replaced.
    public var supersededOutputs = "keep"
    /// `DERIVE_REUSE`: `on` (outputs an earlier run recorded for the same content and chain,
    /// still in the store, are reused without decoding) or `off` (every job derives everything).
    public var reuse = true
    /// `DERIVE_POLL_INTERVAL`: seconds between claims when idle; nil means 1 with PostgreSQL
    /// (notifications wake it sooner) and 0.2 with SQLite (which has none).
    public var pollInterval: Double?
    /// `DERIVE_METRICS_PORT` and `DERIVE_METRICS_ADDRESS`: where Prometheus metrics, `/healthz`
    /// and `/readyz` are served. Loopback unless told otherwise: a container that is scraped
    /// from outside sets `DERIVE_METRICS_ADDRESS=0.0.0.0` (the deployment files do).
    public var metricsPort: Int?
    public var metricsAddress = "127.0.0.1"
    /// `DERIVE_LOG_FORMAT` (`text` or `json`) and `DERIVE_LOG_LEVEL` (`debug`, `info`, `warning`, `error`).
    public var logFormat = "text"
    public var logLevel = "info"

    public static let logFormats = ["text", "json"]
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    public init() {}

    init(_ env: Environment) {
        let queues = env.list("DERIVE_QUEUES")
        for queue in queues where !QueueName.isValid(queue) {
            env.fail("DERIVE_QUEUES", "\(Quoted(queue)) is not a queue name (1 to 64 of A-Z a-z 0-9 _ . -)")
        }
        if !queues.isEmpty { self.queues = queues }
        if env["DERIVE_SLOTS"] != nil {
            let slots = env.int("DERIVE_SLOTS", 0)
            self.slots = slots > 0 ? slots : nil
        }
        lease = env.seconds("DERIVE_LEASE", lease)
        grace = env.seconds("DERIVE_GRACE", grace)
        rescueInterval = env.seconds("DERIVE_RESCUE_INTERVAL", rescueInterval)
        if let text = env["DERIVE_SCHEDULER_INTERVAL"] {
            if let value = Double(text), value >= 0, value.isFinite {
                schedulerInterval = value
            } else {
                env.fail("DERIVE_SCHEDULER_INTERVAL", "must be a number of seconds (0 turns the scheduler off), got \(Quoted(text))")
            }
        }
        if let text = env["DERIVE_ABANDONED_SWEEP_INTERVAL"] {
            if let value = Double(text), value >= 0, value.isFinite {
                abandonedSweepInterval = value
            } else {
                env.fail("DERIVE_ABANDONED_SWEEP_INTERVAL", "must be a number of seconds (0 turns the sweeps off), got \(Quoted(text))")
            }
        }
        supersededOutputs = env["DERIVE_SUPERSEDED_OUTPUTS"]?.lowercased() ?? supersededOutputs
        if !["keep", "delete"].contains(supersededOutputs) {
            env.fail("DERIVE_SUPERSEDED_OUTPUTS", "must be keep or delete, got \(Quoted(supersededOutputs))")
        }
        if let text = env["DERIVE_REUSE"]?.lowercased() {
            if ["on", "off"].contains(text) { reuse = text == "on" } else { env.fail("DERIVE_REUSE", "must be on or off, got \(Quoted(text))") }
        }
        if env["DERIVE_POLL_INTERVAL"] != nil { pollInterval = env.seconds("DERIVE_POLL_INTERVAL", 1) }
        if env["DERIVE_METRICS_PORT"] != nil {
            let port = env.int("DERIVE_METRICS_PORT", 0)
            if port > 65535 { env.fail("DERIVE_METRICS_PORT", "must be a TCP port, 0 to 65535, got \(port)") }
            metricsPort = port
        }
        metricsAddress = env["DERIVE_METRICS_ADDRESS"] ?? metricsAddress
        logFormat = env["DERIVE_LOG_FORMAT"]?.lowercased() ?? logFormat
        if !Self.logFormats.contains(logFormat) {
            env.fail("DERIVE_LOG_FORMAT", "must be text or json, got \(Quoted(logFormat))")
        }
        logLevel = env["DERIVE_LOG_LEVEL"]?.lowercased() ?? logLevel
        if !Self.logLevels.contains(logLevel) {
            env.fail("DERIVE_LOG_LEVEL", "must be one of \(Self.logLevels.joined(separator: ", ")), got \(Quoted(logLevel))")
        }
    }
}

/// Queue names, as the database's check constraint allows them.
public enum QueueName {
    public static func isValid(_ name: String) -> Bool {
        (1...64).contains(name.count) && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) }
    }
}

public struct StoreSettings: Sendable, Hashable {
    public static let defaultCacheControl = "public, max-age=31536000, immutable"

    public var location: StoreLocation
    public var publicBaseURL: String?
    /// Sent with every S3 object: keys name content, so objects never change and can be cached forever.
    public var cacheControl: String
    public var keyTemplate: KeyTemplate
    /// `DERIVE_ABANDONED_AFTER`: seconds after which a temporary file or multipart upload that
    /// an interrupted write left, or an object a finished job wrote and never recorded, is
    /// removed (by the workers' sweeps and `derive prune`).
    public var abandonedAfter: Double

    public init(location: StoreLocation, publicBaseURL: String? = nil, cacheControl: String = StoreSettings.defaultCacheControl,
                keyTemplate: KeyTemplate = .default, abandonedAfter: Double = AbandonedWrites.defaultAge) {
        self.location = location
        self.publicBaseURL = publicBaseURL
        self.cacheControl = cacheControl
        self.keyTemplate = keyTemplate
        self.abandonedAfter = abandonedAfter
    }
}

/// Typed reads of environment variables. A bad value is remembered with its variable's name and
/// the default is used meanwhile, so every problem is reported at once by `finish()`.
final class Environment {
    let values: [String: String]
    private(set) var issues: [ValidationIssue] = []

    init(_ values: [String: String]) {
        self.values = values
    }

    subscript(name: String) -> String? {
        guard let value = values[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    func fail(_ name: String, _ reason: String) {
        issues.append(ValidationIssue(location: name, reason: reason))
    }

    /// Runs a parser, keeping its issues; nil when it failed.
    func parse<T>(_ body: () throws(ValidationError) -> T) -> T? {
        do {
            return try body()
        } catch {
            issues += error.issues
            return nil
        }
    }

    func finish() throws(ValidationError) {
        if !issues.isEmpty { throw ValidationError(issues) }
    }

    func int(_ name: String, _ fallback: Int) -> Int {
        guard let text = self[name] else { return fallback }
        guard let value = Int(text.replacingOccurrences(of: "_", with: "")), value >= 0 else {
            fail(name, "must be a whole number of 0 or more, got \(Quoted(text))")
            return fallback
        }
        return value
    }

    func seconds(_ name: String, _ fallback: Double) -> Double {
        guard let text = self[name] else { return fallback }
        guard let value = Double(text), value > 0, value.isFinite else {
            fail(name, "must be a number of seconds above 0, got \(Quoted(text))")
            return fallback
        }
        return value
    }

    func bool(_ name: String, _ fallback: Bool) -> Bool {
        guard let text = self[name]?.lowercased() else { return fallback }
        switch text {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default:
            fail(name, "must be true or false, got \(Quoted(text))")
            return fallback
        }
    }

    func list(_ name: String, separators: String = ", ") -> [String] {
        self[name].map { Self.split($0, separators: separators) } ?? []
    }

    static func split(_ text: String, separators: String) -> [String] {
        text.split(whereSeparator: { separators.contains($0) }).map(String.init)
    }
}
