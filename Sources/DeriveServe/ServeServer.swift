import DeriveDigest
import DeriveHTTP
import DeriveJobs
import DeriveLanguage
import Foundation
import Logging
import Synchronization

/// `derive serve`: Cloudinary's upload API (`POST /v1_1/<cloud>/image/upload`), delivery URLs
/// (`GET /<cloud>/image/upload/...`) and the admin read of one asset, over Derive's queue and
/// store. Every request is answered: a malformed one gets Cloudinary's error JSON and a 4xx.
public final class ServeServer: Sendable {
    public var port: Int { listener.port }
    private let listener: HTTPListener
    /// The notification outbox's loop (`CloudinaryService.runOutbox`).
    private let outbox: Task<Void, Never>

    private init(listener: HTTPListener, outbox: Task<Void, Never>) {
        self.listener = listener
        self.outbox = outbox
    }

    public static func start(service: CloudinaryService, address: String = "127.0.0.1", port: Int,
                             logger: Logger = Logger(label: "derive.serve")) async throws(HTTPListenerError) -> ServeServer {
        await service.refreshCache()
        var routes = HTTPRoutes()
        routes.append("*") { request in await service.respond(request) }
        let listener = try await HTTPListener.start(address: address, port: port, timeout: 60, logger: logger, routes: routes)
        return ServeServer(listener: listener, outbox: Task.detached {
            async let refresh: Void = service.runCacheRefresh()
            await service.runOutbox()
            await refresh
        })
    }

    public func stop() async {
        await listener.stop()
        outbox.cancel()
        await outbox.value
    }
}

/// What `derive serve` keeps in the database: the queue its uploads' eager jobs go to, the
/// assets' records and their management calls, and the upload mappings.
public typealias ServeDatabase = JobStore & ServedAssets & ServedAssetCatalog & UploadMappings

/// The API's behaviour, apart from the listener (tests call it directly too).
public final class CloudinaryService: Sendable {
    public let settings: ServeSettings
    let database: any ServeDatabase
    let store: any AssetStore
    let fetcher: any SourceFetcher
    let records: ServeRecords
    let chunks: ChunkedUploads
    let webhooks: (any WebhookSender)?
    let logger: Logger
    let cache: DeliveryCache
    /// The Admin API's calls this hour (`X-FeatureRateLimit-*`).
    let adminRate: AdminRateLimit
    /// Called after each job this service queues (a delivery's derivation, an upload's eager
    /// outputs): `derive serve` working the queue itself rings its worker, which would otherwise
    /// find the job at its next poll, up to 50 ms later, while a client waits.
    private let onQueued = Mutex<(@Sendable () -> Void)?>(nil)

    public init(settings: ServeSettings, database: any ServeDatabase, store: any AssetStore, fetcher: any SourceFetcher, webhooks: (any WebhookSender)? = nil,
                logger: Logger) {
        self.webhooks = webhooks
        self.settings = settings
        self.database = database
        self.store = store
        self.fetcher = fetcher
        records = ServeRecords(database: database, store: store, cloud: settings.cloudName)
        chunks = ChunkedUploads(store: store, cloud: settings.cloudName, maxBytes: settings.maxUploadBytes)
        adminRate = AdminRateLimit(limit: settings.adminRateLimit)
        self.logger = logger
        cache = DeliveryCache(maxBytes: settings.cacheBytes)
    }

    /// Sets what is called after each job this service queues (at most one; the last set wins).
    public func whenQueueing(_ hook: @escaping @Sendable () -> Void) {
        onQueued.withLock { $0 = hook }
    }

    func queued() {
        onQueued.withLock { $0 }?()
    }

    /// Reads the database's generation number for the cloud into the delivery cache (which
    /// drops its answers when it moved); a failed read drops them too.
    func refreshCache() async {
        do {
            cache.observe(generation: try await Self.offPool { [database, settings] () throws(DeriveError) -> Int64 in
                try database.servedAssetGeneration(cloud: settings.cloudName)
            })
        } catch {
            cache.forget()
        }
    }

    /// Keeps the delivery cache in step with the database until cancelled.
    func runCacheRefresh() async {
        while !Task.isCancelled {
            await refreshCache()
            try? await Task.sleep(for: DeliveryCache.pollInterval)
        }
    }

    /// Every request, routed by its path.
    public func respond(_ request: HTTPRequest) async -> HTTPResponse {
        if let kept = cache.answer(request) { return kept }
        let response = await route(request)
        // An API call may have changed what delivery gave: the cache reads the database's
        // number again before this answer goes, so the caller's next request sees the change.
        if request.method != .GET, request.method != .HEAD, request.path.hasPrefix("/v1_1/") { await refreshCache() }
        return response
    }

    private func route(_ request: HTTPRequest) async -> HTTPResponse {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(String.init)
        do {
            if segments.first == "v1_1", segments.count >= 2 {
                guard segments[1] == settings.cloudName else { throw ServeError(401, "Invalid cloud_name \(segments[1])") }
                let rest = Array(segments.dropFirst(2))
                if rest == ["image", "upload"] || rest == ["auto", "upload"] {
                    guard request.method == .POST else { throw ServeError(405, "Use POST to upload") }
                    return try await upload(request)
                }
                if let answer = try await management(request, rest: rest) { return answer }
                throw ServeError(404, "There is no such API: \(Quoted(request.path))")
            }
            if request.path == "/healthz" { return Self.json(.object(["status": .string("ok")])) }
            if let (route, rest) = try deliveryRoute(segments) {
                guard request.method == .GET || request.method == .HEAD else { throw ServeError(405, "Use GET to deliver") }
                if route == .fetch { return try await deliverFetch(request, path: rest) }
                let generation = cache.generation
                let response = try await deliver(request, path: rest, route: route)
                cache.keep(response, for: request, generation: generation)
                return response
            }
            throw ServeError(404, "Resource not found")
        } catch let error as ServeError {
            return Self.error(error)
        } catch {
            logger.error("request failed", metadata: ["error": "\(error)"])
            return Self.error(ServeError(500, "Internal error"))
        }
    }

    // MARK: Upload

    /// Stores an original (content-addressed, within the upload limit) and the asset it makes,
    /// not yet recorded, with where it was stored: uploads and fetch deliveries both start here.
    func storeOriginal(_ bytes: [UInt8], facts: SourceFacts, publicID: String, name: String, tags: [String],
                       context: [String: String]) async throws -> (asset: ServedAsset, stored: Originals.Stored) {
        let stored: Originals.Stored
        do {
            stored = try await Self.offPool { [store, settings] () throws(DeriveError) -> Originals.Stored in
                try Originals.store(bytes, in: store, maxBytes: settings.maxUploadBytes, name: name)
            }
        } catch {
            throw Self.refusal(error)
        }
        let asset = ServedAsset(cloud: settings.cloudName, publicID: publicID, version: Int(Date().timeIntervalSince1970),
                                format: facts.format.fileExtension, width: facts.orientedSize.width, height: facts.orientedSize.height,
                                bytes: bytes.count, sha256: stored.sha256, originalKey: stored.object.key.value, createdAt: Date(),
                                tags: tags, context: context)
        return (asset, stored)
    }

    /// Makes sure the original a just-recorded row names is in the store: a deletion of
    /// another public id with the same bytes may have checked that no row named it (before this
    /// row committed) and deleted it. Checked while no release can run, and stored again if gone.
    func keepOriginal(_ bytes: [UInt8], asset: ServedAsset) async throws {
        try await Self.offPool { [database, store] () throws(DeriveError) in
            let key = try StorageKey(asset.originalKey)
            try database.holdingServedObject(asset.originalKey, store: store.identity) { () throws(DeriveError) in
                guard try !store.exists(key) else { return }
                let format = ImageSniffer.format(of: Array(bytes.prefix(64)))
                _ = try store.put(bytes, key: key, contentType: format?.mediaType ?? "application/octet-stream")
            }
        }
    }

    /// The parameters of a request (multipart or urlencoded), read within the size limit.
    struct Submitted {
        var fields: [String: String]
        var file: [UInt8]?
        var filename: String?
    }

    func readForm(_ request: HTTPRequest) async throws -> Submitted {
        // Over the limit by its Content-Length: refused before a byte of it is read.
        let bound = settings.maxUploadBytes + 64 * 1024
        if let length = request.headers[HTTPHeader("Content-Length")] {
            guard let declared = Int(length.trimmingCharacters(in: .whitespaces)), declared >= 0 else { throw ServeError(400, "Content-Length is not a number") }
            guard declared <= bound else { throw ServeError(413, "File size too large. Got \(declared). Maximum is \(settings.maxUploadBytes).") }
        }
        let body: [UInt8]
        switch await BoundedBody.read(request, limit: bound) {
        case .success(let read): body = read
        case .failure(.tooLarge): throw ServeError(413, "File size too large. Maximum is \(settings.maxUploadBytes).")
        case .failure(.unreadable): throw ServeError(400, "The request's body could not be read")
        }
        let type = request.headers[HTTPHeader("Content-Type")] ?? ""
        if let boundary = MultipartForm.boundary(contentType: type) {
            do {
                let form = try MultipartForm.parse(body, boundary: boundary)
                return Submitted(fields: form.fields, file: form.file, filename: form.filename)
            } catch {
                throw ServeError(400, "Malformed multipart body: \(error.description)")
            }
        }
        if type.lowercased().hasPrefix("application/x-www-form-urlencoded") || type.isEmpty {
            return Submitted(fields: FormFields.parse(body), file: nil, filename: nil)
        }
        throw ServeError(400, "Send the upload as multipart/form-data or application/x-www-form-urlencoded")
    }

    /// The API key and secret that signed an Upload API call's parameters (uploads and the
    /// management calls: `tags`, `context`), its timestamp within the hour; 401 or 400 otherwise.
    func verifySigned(_ fields: [String: String], signature: String) throws -> (key: String, secret: String) {
        guard let key = fields["api_key"], !key.isEmpty else { throw ServeError(401, "Must supply api_key") }
        guard let secret = settings.credentials[key] else { throw ServeError(401, "Unknown API key \(Quoted(key))") }
        guard let timestamp = fields["timestamp"].flatMap({ Int($0) }) else { throw ServeError(400, "Missing required parameter - timestamp") }
        let now = Int(Date().timeIntervalSince1970)
        // Compared, never subtracted: a timestamp of Int.min must not overflow.
        guard timestamp >= now - 3600, timestamp <= now + 3600 else {
            throw ServeError(400, "Stale request - reported time is \(timestamp) which is more than 1 hour ago")
        }
        guard CloudinarySigning.verify(fields, signature: signature, secret: secret) else {
            throw ServeError(401, "Invalid Signature \(Quoted(signature)). String to sign - \(Quoted(CloudinarySigning.stringToSign(fields, version: 2), limit: 400)).")
        }
        return (key, secret)
    }

    /// Parameters an unsigned upload may set itself (the preset decides the rest).
    static let unsignedAllowed: Set<String> = ["file", "upload_preset", "public_id", "folder", "tags", "context", "timestamp", "filename_override",
                                               "api_key", "cloud_name", "resource_type"]

    func upload(_ request: HTTPRequest) async throws -> HTTPResponse {
        let form = try await readForm(request)
        var fields = form.fields
        let signed: Bool
        var signingSecret = settings.credentials.sorted { $0.key < $1.key }.first?.value ?? ""
        var signingKey = settings.credentials.sorted { $0.key < $1.key }.first?.key ?? ""
        var preset: UploadPreset?
        if let presetName = fields["upload_preset"], !presetName.isEmpty {
            guard let found = settings.presets[presetName] else { throw ServeError(400, "Upload preset not found") }
            preset = found
        }
        if let signature = fields["signature"], !signature.isEmpty {
            (signingKey, signingSecret) = try verifySigned(fields, signature: signature)
            signed = true
        } else {
            guard let preset else { throw ServeError(400, "Must supply api_key") }
            guard preset.unsigned else { throw ServeError(400, "Upload preset must be whitelisted for unsigned uploads") }
            for name in fields.keys.sorted() where !Self.unsignedAllowed.contains(name) && !(fields[name] ?? "").isEmpty {
                throw ServeError(400, "\(name) parameter is not allowed when using unsigned upload. Only upload_preset,callback,public_id,folder,asset_folder,tags,context,metadata,face_coordinates,custom_coordinates,source,filename_override,manifest_transformation,manifest_json,template,template_vars,regions,public_id_prefix upload parameters are allowed.")
            }
            signed = false
        }
        // The preset's values: defaults under a signed upload, the rule under an unsigned one.
        if let preset {
            func apply(_ name: String, _ value: String?) {
                guard let value else { return }
                if !signed || (fields[name] ?? "").isEmpty { fields[name] = value }
            }
            apply("eager", preset.eager)
            apply("eager_async", preset.eagerAsync.map { $0 ? "true" : "false" })
            apply("overwrite", preset.overwrite.map { $0 ? "true" : "false" })
            apply("unique_filename", preset.uniqueFilename.map { $0 ? "true" : "false" })
            apply("use_filename", preset.useFilename.map { $0 ? "true" : "false" })
            if let folder = preset.folder, !signed || (fields["folder"] ?? "").isEmpty { fields["folder"] = folder }
            if let tags = preset.tags {
                let given = (fields["tags"] ?? "").isEmpty ? [] : [fields["tags"]!]
                fields["tags"] = (given + [tags]).joined(separator: ",")
            }
        }

        // The image: bytes, a data: URI or a remote URL.
        var (bytes, filename) = try await imageBytes(form, fields: fields)
        // A part of a chunked upload (`upload_large`): held in the store until the last arrives.
        if let range = request.headers[HTTPHeader("Content-Range")] {
            guard let whole = try await chunks.receive(bytes, range: range, uploadID: request.headers[HTTPHeader("X-Unique-Upload-Id")]) else {
                var members: [JSONMember] = [JSONMember(key: "done", value: .bool(false))]
                if let id = fields["public_id"], !id.isEmpty { members.append(JSONMember(key: "public_id", value: .string(id))) }
                return Self.json(.object(members))
            }
            bytes = whole
        }
        guard let facts = ImageSniffer.facts(of: bytes) else { throw ServeError(400, "Invalid image file") }

        // What it will be called.
        let publicID = try Self.publicID(fields: fields, filename: fields["filename_override"] ?? filename, signed: signed)
        let eager = try Self.eagerOutputs(fields["eager"] ?? "", originalFormat: facts.format)
        for name in ["notification_url", "eager_notification_url"] {
            if let url = fields[name], !url.isEmpty, !(url.lowercased().hasPrefix("http://") || url.lowercased().hasPrefix("https://")) || url.count > 2048 {
                throw ServeError(400, "\(name) must be an http or https URL")
            }
        }
        let overwrite = Self.flag(fields["overwrite"]) ?? signed
        let eagerAsync = Self.flag(fields["eager_async"]) ?? false
        // The tags and context go into the eager job too, where conditions read them
        // (`if_!sale!_in_tags`), so they are refused here as a job would refuse them.
        let assetFacts = AssetFacts(tags: Self.tags(fields["tags"]), context: Self.context(fields["context"]))
        if let issue = assetFacts.issues.first { throw ServeError(400, "Invalid tags or context: \(issue)") }

        var (asset, stored) = try await storeOriginal(bytes, facts: facts, publicID: publicID, name: "the upload", tags: assetFacts.tags,
                                                      context: assetFacts.context)

        // Eager outputs: one job, each output a transformation, queued in the transaction that
        // records the asset (a process killed in between leaves neither).
        var submission: (job: NewJob, outputs: [EagerOutput])?
        if !eager.isEmpty {
            let spec = JobSpec(source: stored.location, outputs: eager.enumerated().map { index, item in
                var output = item.spec
                output.name = "eager\(index)"
                return output
            }, asset: assetFacts)
            submission = (NewJob(payload: ChainEncoder.json(spec), queue: settings.queue, priority: 0, runAt: nil, maxAttempts: 3, dedupeKey: nil,
                                 originalName: filename),
                          eager.map { EagerOutput(transformation: $0.transformation, format: $0.format, identity: $0.identity) })
        }
        // The notifications are written with the upload, held until this request has answered
        // (then released with their bodies): a process killed in between still sends them.
        let notificationURL = fields["notification_url"].flatMap { $0.isEmpty ? nil : $0 }
        let eagerURL = eagerAsync && submission != nil ? fields["eager_notification_url"].flatMap({ $0.isEmpty ? nil : $0 }) ?? notificationURL : nil
        var notifications: [OutboxNotification] = []
        if webhooks != nil {
            for (type, url) in [("upload", notificationURL), ("eager", eagerURL)] {
                guard let url else { continue }
                notifications.append(OutboxNotification(cloud: settings.cloudName, publicID: publicID, url: url, type: type, keyName: signingKey,
                                                        body: nil, jobID: nil, base: base(request)))
            }
        }
        let hold = notificationHold
        let recorded = try await Self.offPool { [database, asset, overwrite, submission, notifications] () throws(DeriveError) -> RecordedUpload in
            try database.recordUpload(asset, overwrite: overwrite, eager: submission, notifications: notifications, hold: hold)
        }
        if recorded.eagerJob != nil { queued() }
        if !recorded.existing { try await keepOriginal(bytes, asset: recorded.asset) }
        let held = Dictionary(zip(notifications.map(\.type), recorded.notificationIDs), uniquingKeysWith: { first, _ in first })
        if recorded.existing {
            var members = Self.assetJSON(recorded.asset, base: base(request), cloud: settings.cloudName)
            members.append(JSONMember(key: "existing", value: .bool(true)))
            return Self.json(.object(members))
        }
        asset = recorded.asset
        let pending = recorded.eagerJob.flatMap { id in asset.eagerJobs.first { $0.jobID == id } }
        if let id = held["eager"] { await releaseNotification(id, body: nil) }
        if let pending, !eagerAsync {
            do {
                asset = try await finish(pending, asset: asset) ?? asset
            } catch {
                // The upload is recorded all the same: its notification goes out, made from the record.
                if let id = held["upload"] { await releaseNotification(id, body: nil) }
                throw error
            }
        } else if let pending, held["eager"] == nil {
            // With an eager notification, its outbox row records the outputs when the job ends
            // (`eagerBody`); without one, a background wait does.
            finishLater(pending, asset: asset)
        }
        var members = Self.assetJSON(asset, base: base(request), cloud: settings.cloudName,
                                     eager: eager.isEmpty ? nil : eager.map { ($0.transformation, $0.format, $0.identity) }, processing: eagerAsync)
        members.append(JSONMember(key: "signature", value: .string(MessageDigest.hex("public_id=\(asset.publicID)&version=\(asset.version)"
            + signingSecret, .sha1))))
        if let filename { members.append(JSONMember(key: "original_filename", value: .string(Self.stem(filename)))) }
        if let id = held["upload"] { await releaseNotification(id, body: JSONWriter.compact(.object(members))) }
        return Self.json(.object(members))
    }

    /// Waits (bounded) for an eager job and records its outputs as the asset's derivatives.
    func finish(_ job: EagerJob, asset: ServedAsset, failure: String = "Eager transformation failed") async throws -> ServedAsset? {
        let snapshot = try await waitForJob(job.jobID)
        guard let snapshot else { return nil }
        guard snapshot.state == .completed, let result = snapshot.result else {
            let message = snapshot.errors.last.flatMap { $0["detail"] }.flatMap { value -> String? in
                if case .string(let text) = value { return text }
                return nil
            } ?? snapshot.state.rawValue
            throw ServeError(400, "\(failure): \(message)")
        }
        try database.recordDerivatives(Self.derivatives(from: result, job: job), cloud: asset.cloud, publicID: asset.publicID, version: asset.version)
        return try records.get(asset.publicID)
    }

    /// The asset with the outputs of its finished eager jobs recorded: a job whose waiter
    /// stopped (`derive serve` restarted, or the wait ran out) has its outputs recorded by the
    /// next read that misses them.
    func reconciled(_ asset: ServedAsset) throws(DeriveError) -> ServedAsset {
        var found: [ServedDerivative] = []
        for job in asset.eagerJobs where job.outputs.contains(where: { asset.derivatives[$0.identity] == nil }) {
            guard let snapshot = try database.job(job.jobID), snapshot.state == .completed, let result = snapshot.result else { continue }
            found += Self.derivatives(from: result, job: job)
        }
        guard !found.isEmpty else { return asset }
        try database.recordDerivatives(found, cloud: asset.cloud, publicID: asset.publicID, version: asset.version)
        return try records.get(asset.publicID) ?? asset
    }

    /// The job's snapshot once it finished, nil when the wait ran out first.
    func waitForJob(_ id: JobID) async throws -> JobSnapshot? {
        let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int64(settings.wait * 1000)))
        // Looked at 2 ms after queueing, then every 1.5 times longer up to every 20 ms: a
        // finished job is seen within 20 ms (issue 39's budget for the queue's round trip), for
        // one primary-key read per look.
        var delay = 2.0
        while ContinuousClock.now < deadline {
            if let snapshot = try database.job(id), !snapshot.state.isLive { return snapshot }
            try? await Task.sleep(for: .milliseconds(Int(delay)))
            delay = min(20, delay * 1.5)
        }
        return nil
    }

    static func derivatives(from result: JSONValue, job: EagerJob) -> [ServedDerivative] {
        guard case .array(let outputs)? = result["outputs"] else { return [] }
        var found: [ServedDerivative] = []
        for (index, eager) in job.outputs.enumerated() {
            guard let output = outputs.first(where: { $0["name"] == .string("eager\(index)") }) ?? (index < outputs.count ? outputs[index] : nil),
                  case .string(let key)? = output["key"] else { continue }
            func int(_ name: String) -> Int { if case .number(let n)? = output[name] { return n.intValue ?? 0 }; return 0 }
            func string(_ name: String) -> String { if case .string(let s)? = output[name] { return s }; return "" }
            found.append(ServedDerivative(identity: eager.identity, transformation: eager.transformation, format: eager.format, key: key,
                                          width: int("width"), height: int("height"), bytes: int("bytes"), sha256: string("sha256"), jobID: job.jobID))
        }
        return found
    }

    func imageBytes(_ form: Submitted, fields: [String: String]) async throws -> ([UInt8], String?) {
        if let file = form.file {
            guard file.count <= settings.maxUploadBytes else { throw ServeError(413, "File size too large. Got \(file.count). Maximum is \(settings.maxUploadBytes).") }
            return (file, form.filename)
        }
        guard let text = fields["file"], !text.isEmpty else { throw ServeError(400, "Missing required parameter - file") }
        let lowered = text.prefix(8).lowercased()
        guard lowered.hasPrefix("data:") || lowered.hasPrefix("http://") || lowered.hasPrefix("https://") else {
            throw ServeError(400, "file must be the image's bytes, a data: URI or an http(s) URL")
        }
        let fetched: FetchedSource
        do {
            fetched = try await Self.offPool { [fetcher] () throws(DeriveError) -> FetchedSource in try fetcher.fetch(text) }
        } catch {
            throw Self.refusal(error)
        }
        let name = lowered.hasPrefix("data:") ? nil : text.split(separator: "?").first.flatMap { $0.split(separator: "/").last }.map(String.init)
        return (fetched.image.bytes, name)
    }

    static func refusal(_ error: DeriveError) -> ServeError {
        switch error.code {
        case .limitExceeded: ServeError(413, error.detail)
        case .unsupportedFormat, .corruptImage, .invalidJob: ServeError(400, error.detail)
        case .sourceRefused: ServeError(400, "Error in loading \(error.detail)")
        case .sourceUnavailable: ServeError(400, "Error in loading: \(error.detail)")
        default: ServeError(500, error.detail)
        }
    }

    // MARK: Names and parameters

    static func flag(_ value: String?) -> Bool? {
        switch value?.lowercased() {
        case "true", "1": true
        case "false", "0": false
        default: nil
        }
    }

    static func tags(_ value: String?) -> [String] {
        (value ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `key=value|key=value` (`\|` and `\=` escaped), as the SDKs send context.
    static func context(_ value: String?) -> [String: String] {
        guard let value, !value.isEmpty else { return [:] }
        var result: [String: String] = [:]
        var pairs: [String] = [], current = "", escaped = false
        for character in value {
            if escaped { current.append(character == "|" ? "\u{1}" : character == "=" ? "\u{2}" : character); escaped = false; continue }
            if character == "\\" { escaped = true; continue }
            if character == "|" { pairs.append(current); current = ""; continue }
            current.append(character)
        }
        pairs.append(current)
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = parts.first, !name.isEmpty else { continue }
            func restore(_ text: Substring) -> String { text.replacingOccurrences(of: "\u{1}", with: "|").replacingOccurrences(of: "\u{2}", with: "=") }
            result[restore(name)] = parts.count > 1 ? restore(parts[1]) : ""
        }
        return result
    }

    static func stem(_ filename: String) -> String {
        let last = filename.split(separator: "/").last.map(String.init) ?? filename
        guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return last }
        return String(last[..<dot])
    }

    /// A public id: segments of letters, digits, `_`, `-` and `.` (what the store's keys allow).
    static func validPublicID(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= 255 else { return false }
        return id.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { segment in
            !segment.isEmpty && segment != "." && segment != ".." && segment.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }
        }
    }

    static func publicID(fields: [String: String], filename: String?, signed: Bool) throws -> String {
        let folder = (fields["folder"] ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        var id: String
        if let given = fields["public_id"], !given.isEmpty {
            id = given
        } else if flag(fields["use_filename"]) == true, let filename, !stem(filename).isEmpty {
            id = stem(filename).map { $0.isASCII && ($0.isLetter || $0.isNumber || "_-".contains($0)) ? $0 : "_" }.reduce(into: "") { $0.append($1) }
            if flag(fields["unique_filename"]) ?? true { id += "_" + randomName(6) }
        } else {
            id = randomName(20)
        }
        if !folder.isEmpty { id = folder + "/" + id }
        guard validPublicID(id) else {
            throw ServeError(400, "Invalid public_id \(Quoted(id)): Derive's public ids are /-separated segments of A-Z a-z 0-9 _ - .")
        }
        return id
    }

    static func randomName(_ count: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
        return String((0..<count).map { _ in alphabet.randomElement()! })
    }

    /// An eager transformation: what the client wrote, its output, extension and identity.
    public struct Eager: Sendable {
        public var transformation: String
        public var format: String
        public var spec: OutputSpec
        public var identity: String
    }

    /// `eager` as the SDKs send it: transformations separated by `|`, each optionally ending
    /// in `/<extension>` (the SDKs' dict form with a `format`).
    static func eagerOutputs(_ value: String, originalFormat: ImageFormat) throws -> [Eager] {
        guard !value.isEmpty else { return [] }
        let items = value.split(separator: "|").map(String.init)
        guard items.count <= 20 else { throw ServeError(400, "At most 20 eager transformations") }
        return try items.map { item in
            var transformation = item, format: String?
            if let slash = item.lastIndex(of: "/") {
                let last = item[item.index(after: slash)...]
                if !last.contains("_"), !last.contains(",") {
                    format = last.isEmpty ? nil : String(last)
                    transformation = String(item[..<slash])
                }
            }
            return try derivation(transformation, format: format ?? originalFormat.fileExtension)
        }
    }

    /// The identity of the derivative a transformation and extension make (the SHA-256 of the
    /// output's canonical form), under which it is recorded.
    public static func identity(transformation: String, format: String) throws -> String {
        try derivation(transformation, format: format).identity
    }

    /// The output a transformation and extension make, with its identity (the canonical form).
    public static func derivation(_ transformation: String, format: String) throws -> Eager {
        guard let outputFormat = OutputFormat.parse(format), outputFormat != .auto, outputFormat != .original else {
            throw ServeError(400, "Invalid extension \(Quoted(format))")
        }
        var spec: OutputSpec
        do {
            spec = try TransformationInput.output(named: "d", transformation: transformation.isEmpty ? "" : transformation)
        } catch {
            throw ServeError(400, "Invalid transformation \(Quoted(transformation)): \(error)")
        }
        if spec.settings.format == nil { spec.settings.format = outputFormat }
        let identity = SHA256.hex(JSONWriter.canonical(ChainEncoder.json(spec)))
        return Eager(transformation: transformation, format: format, spec: spec, identity: identity)
    }

    // MARK: Responses

    func base(_ request: HTTPRequest) -> String {
        if let base = settings.deliveryBase { return base.hasSuffix("/") ? String(base.dropLast()) : base }
        let host = request.headers[HTTPHeader("Host")].flatMap { $0.allSatisfy { $0.isASCII && !$0.isWhitespace && $0 != "/" } ? $0 : nil }
        return "http://" + (host ?? "localhost")
    }

    static func url(base: String, cloud: String, transformation: String?, version: Int, publicID: String, format: String) -> String {
        [base, cloud, "image", "upload", transformation, "v\(version)", publicID + "." + format].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "/")
    }

    static func secure(_ url: String) -> String {
        url.hasPrefix("http://") ? "https://" + url.dropFirst(7) : url
    }

    static func assetJSON(_ asset: ServedAsset, base: String, cloud: String, eager: [(String, String, String)]? = nil, processing: Bool = false) -> [JSONMember] {
        let url = url(base: base, cloud: cloud, transformation: nil, version: asset.version, publicID: asset.publicID, format: asset.format)
        var members: [JSONMember] = [
            JSONMember(key: "asset_id", value: .string(String(asset.sha256.prefix(32)))),
            JSONMember(key: "public_id", value: .string(asset.publicID)),
            JSONMember(key: "version", value: .int(asset.version)),
            JSONMember(key: "version_id", value: .string(String(MessageDigest.hex("\(asset.publicID)/\(asset.version)", .sha256).prefix(32)))),
            JSONMember(key: "width", value: .int(asset.width)),
            JSONMember(key: "height", value: .int(asset.height)),
            JSONMember(key: "format", value: .string(asset.format)),
            JSONMember(key: "resource_type", value: .string("image")),
            JSONMember(key: "created_at", value: .string(ISO8601DateFormatter().string(from: asset.createdAt))),
            JSONMember(key: "tags", value: .array(asset.tags.map(JSONValue.string))),
            JSONMember(key: "bytes", value: .int(asset.bytes)),
            JSONMember(key: "type", value: .string("upload")),
            JSONMember(key: "etag", value: .string(String(asset.sha256.prefix(32)))),
            JSONMember(key: "url", value: .string(url)),
            JSONMember(key: "secure_url", value: .string(secure(url))),
        ]
        if !asset.context.isEmpty {
            members.append(JSONMember(key: "context", value: .object(["custom": .object(asset.context.sorted { $0.key < $1.key }.map {
                JSONMember(key: $0.key, value: .string($0.value))
            })])))
        }
        if let eager {
            members.append(JSONMember(key: "eager", value: .array(eager.map { transformation, format, identity in
                let url = Self.url(base: base, cloud: cloud, transformation: transformation, version: asset.version, publicID: asset.publicID, format: format)
                var item: [JSONMember] = [JSONMember(key: "transformation", value: .string(transformation + (format == asset.format ? "" : "/" + format)))]
                if let derivative = asset.derivatives[identity] {
                    item += [JSONMember(key: "width", value: .int(derivative.width)), JSONMember(key: "height", value: .int(derivative.height)),
                             JSONMember(key: "bytes", value: .int(derivative.bytes)), JSONMember(key: "format", value: .string(derivative.format))]
                } else {
                    item.append(JSONMember(key: "status", value: .string(processing ? "processing" : "pending")))
                }
                item += [JSONMember(key: "url", value: .string(url)), JSONMember(key: "secure_url", value: .string(secure(url)))]
                return .object(item)
            })))
        }
        return members
    }

    static func json(_ value: JSONValue, status: HTTPStatusCode = .ok) -> HTTPResponse {
        HTTPResponse(statusCode: status, headers: [HTTPHeader("Content-Type"): "application/json; charset=utf-8", HTTPHeader("Cache-Control"): "no-store"],
                     body: Data(JSONWriter.compact(value).utf8))
    }

    static func error(_ error: ServeError) -> HTTPResponse {
        var response = json(.object(["error": .object(["message": .string(error.message)])]),
                            status: HTTPStatusCode(error.status, phrase: phrase(error.status)))
        response.headers[HTTPHeader("X-Cld-Error")] = String(error.message.prefix(200).map { $0.isASCII && !$0.isNewline ? $0 : "?" })
        return response
    }

    static func phrase(_ status: Int) -> String {
        switch status {
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Payload Too Large"
        case 420: "Enhance Your Calm"
        case 500: "Internal Server Error"
        default: "Error"
        }
    }

    /// Runs blocking work (curl, the store) on a thread of its own, off Swift's small pool.
    static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws(DeriveError) -> T) async throws(DeriveError) -> T {
        let result: Result<T, DeriveError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                do throws(DeriveError) { continuation.resume(returning: .success(try body())) } catch { continuation.resume(returning: .failure(error)) }
            }
        }
        return try result.get()
    }
}
