import DeriveDigest
import DeriveJobs
import DeriveLanguage
import DeriveHTTP
import Foundation

extension CloudinaryService {
    /// A delivery URL: the original, a recorded derivative, or one derived now for a caller
    /// who may have work done (a signed URL, a transformation on the allowed list).
    func deliver(_ request: HTTPRequest, path segments: [String], route: DeliveryRoute = .upload) async throws -> HTTPResponse {
        let parsed = try Self.parseDelivery(segments, route: route)
        // Every reading covers the same text: the signature is checked once, before anything.
        if let signature = parsed.signature {
            guard settings.credentials.values.contains(where: { CloudinarySigning.verifyURL(parsed.signed, signature: signature, secret: $0) }) else {
                throw ServeError(401, "Invalid signature")
            }
        }
        // The database is read off Swift's pool (two threads on two cores): a slow read there
        // would hold up every request, those the delivery cache answers too.
        let readings = parsed.readings.filter { Self.validPublicID($0.publicID) }
        let found = try await Self.offPool { [records] () throws(DeriveError) -> (path: DeliveryPath, asset: ServedAsset)? in
            for reading in readings {
                if let asset = try records.get(reading.publicID) { return (reading, asset) }
            }
            return nil
        }
        if let (path, asset) = found { return try await deliver(request, path: path, asset: asset) }
        // Not recorded: an upload mapping of its folder brings it (auto-upload).
        let mapped = try await Self.offPool { [database, cloud = settings.cloudName] () throws(DeriveError) -> (path: DeliveryPath, mapping: UploadMapping)? in
            for reading in readings {
                if let mapping = try database.uploadMapping(cloud: cloud, containing: reading.publicID) { return (reading, mapping) }
            }
            return nil
        }
        guard let (path, mapping) = mapped else { throw ServeError(404, "Resource not found") }
        let asset = try await fetchAndRecord(Self.mappedURL(path, mapping: mapping), publicID: path.publicID,
                                             name: "the image of the upload mapping of \(Quoted(mapping.folder))", context: [:])
        return try await deliver(request, path: path, asset: asset)
    }

    /// Where an upload mapping finds a public id: its template, then the public id after the
    /// mapped folder, with the URL's extension (`remote_media/commons/a/flag` delivered as
    /// `.jpg`, mapped to `https://upload.wikimedia.org/wikipedia/`, is
    /// `https://upload.wikimedia.org/wikipedia/commons/a/flag.jpg`).
    static func mappedURL(_ path: DeliveryPath, mapping: UploadMapping) -> String {
        let rest = String(path.publicID.dropFirst(mapping.folder.count + 1)) + (path.format.map { "." + $0 } ?? "")
        return mapping.template + (rest.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? rest)
    }

    /// A delivery of a found asset, its URL's signature (if any) already checked.
    func deliver(_ request: HTTPRequest, path: DeliveryPath, asset foundAsset: ServedAsset) async throws -> HTTPResponse {
        var asset = foundAsset
        let format = path.format ?? asset.format
        let answer = Answer(versioned: path.version == asset.version, lastModified: asset.version)
        // The original, untouched.
        if path.transformation.isEmpty, format == asset.format || ImageFormat.parse(format) == ImageFormat.parse(asset.format) {
            return try await serve(request, key: try StorageKey(asset.originalKey), etag: asset.sha256, recordedFormat: asset.format, answer: answer)
        }
        let dependencies = DeliveryDependencies.of(path.transformation)
        // Authorised before parsed: a signed URL (checked above) or a transformation on the allowed
        // list may be read by the language and get work done for it (Cloudinary's strict
        // transformations). Anyone else reaches no parser: they get a derivative already recorded
        // for the transformation exactly as they wrote it, or a refusal. A transformation that
        // depends on the browser (f_auto, w_auto, dpr_auto, q_auto) and was recorded under
        // exactly this text (by an eager upload or a signed URL) was authorised then: its
        // variant for this browser may be made.
        if path.signature == nil && !settings.allowedTransformations.contains(path.transformation) {
            func recordedText() -> Bool { asset.derivatives.values.contains { $0.transformation == path.transformation } }
            if dependencies.isEmpty || !recordedText() {
                var derivative = Self.recorded(asset, transformation: path.transformation, format: format)
                if derivative == nil {
                    asset = try await Self.offPool { [self, asset] () throws(DeriveError) -> ServedAsset in try reconciled(asset) }
                    derivative = Self.recorded(asset, transformation: path.transformation, format: format)
                }
                if let derivative, dependencies.isEmpty {
                    return try await serve(request, key: try StorageKey(derivative.key), etag: derivative.sha256, recordedFormat: derivative.format, answer: answer)
                }
                guard !dependencies.isEmpty, recordedText() else {
                    if path.transformation.isEmpty {
                        throw ServeError(401, "Delivering \(Quoted(asset.publicID)) as .\(format) is a transformation (the original is .\(asset.format)): sign the URL")
                    }
                    throw ServeError(401, "Transformation \(Quoted(path.transformation)) is not allowed: sign the URL")
                }
            }
        }
        if !dependencies.isEmpty {
            return try await deliverVariant(request, path: path, asset: asset, format: format, dependencies: dependencies, answer: answer)
        }
        let derivation = try Self.derivation(path.transformation, format: format)
        if asset.derivatives[derivation.identity] == nil {
            asset = try await Self.offPool { [self, asset] () throws(DeriveError) -> ServedAsset in try reconciled(asset) }
        }
        if let derivative = asset.derivatives[derivation.identity] {
            return try await serve(request, key: try StorageKey(derivative.key), etag: derivative.sha256, recordedFormat: derivative.format, answer: answer)
        }
        let source = store.sourceLocation(of: try StorageKey(asset.originalKey))
        var output = derivation.spec
        output.name = "eager0"
        let job = NewJob(payload: ChainEncoder.json(JobSpec(source: source, outputs: [output], asset: AssetFacts(tags: asset.tags, context: asset.context))), queue: settings.queue, priority: 10, runAt: nil,
                         maxAttempts: 3, dedupeKey: "serve:\(settings.cloudName):\(asset.publicID):\(derivation.identity)")
        let id = try database.submit([job])[0].id
        queued()
        let eager = EagerJob(jobID: id, outputs: [EagerOutput(transformation: derivation.transformation, format: format, identity: derivation.identity)])
        guard let updated = try await finish(eager, asset: asset, failure: "The transformation failed"), let derivative = updated.derivatives[derivation.identity] else {
            throw ServeError(420, "The derivative is still being made: ask again shortly")
        }
        return try await serve(request, key: try StorageKey(derivative.key), etag: derivative.sha256, recordedFormat: derivative.format, answer: answer)
    }

    /// A transformation that depends on the browser: made concrete for this request's hints
    /// (`BrowserHints`, `DeliveryVariant`), each variant a derivative of its own, recorded and
    /// reused. `f_auto`'s variants are one per set of candidate formats: a browser that accepts
    /// every format the deployment's `f_auto` chooses among gets the measured `f_auto` output
    /// (its identity unchanged); one that accepts fewer gets one output per format it accepts,
    /// of which the smallest (keeping alpha) is served, as `f_auto` would choose among them.
    func deliverVariant(_ request: HTTPRequest, path: DeliveryPath, asset: ServedAsset, format: String, dependencies: DeliveryDependencies,
                        answer: Answer) async throws -> HTTPResponse {
        let hints = BrowserHints { request.headers[HTTPHeader($0)] }
        var answer = answer
        answer.vary = dependencies.vary
        answer.acceptCH = dependencies.acceptCH
        let concrete = try DeliveryVariant.rewrite(path.transformation, hints: hints, imageWidth: asset.width)
        let derivation = try Self.derivation(concrete, format: format)
        let spec = derivation.spec
        var identity = derivation.identity
        var outputs = [spec]
        if spec.settings.format == .auto {
            let autoFormats = settings.autoFormats.filter(\.isConcrete)
            let candidates = DeliveryVariant.candidates(accepted: hints.formats, autoFormats: autoFormats,
                                                        animated: ImageFormat.parse(asset.format) == .gif,
                                                        mayHaveAlpha: ImageFormat.parse(asset.format) != .jpeg)
            identity = SHA256.hex("derive-delivery/1 \(derivation.identity) formats:\(candidates.map(\.rawValue).joined(separator: ","))")
            if !Set(candidates).isSuperset(of: autoFormats) {
                // One output per candidate, each named apart (a format set's outputs share one
                // name, and the workers' reuse of recorded work looks a name up by its first
                // format only: a set whose first format was recorded skipped the others).
                outputs = candidates.map { format in
                    var single = spec
                    single.settings.format = format
                    // f_auto without a quality searches at q_auto:good; so do its candidates.
                    if single.settings.quality == nil { single.settings.quality = .auto(.good) }
                    return single
                }
            }
        }
        if let derivative = asset.derivatives[identity] {
            return try await serve(request, key: try StorageKey(derivative.key), etag: derivative.sha256, recordedFormat: derivative.format, answer: answer)
        }
        for index in outputs.indices { outputs[index].name = "eager\(index)" }
        let source = store.sourceLocation(of: try StorageKey(asset.originalKey))
        let job = NewJob(payload: ChainEncoder.json(JobSpec(source: source, outputs: outputs, asset: AssetFacts(tags: asset.tags, context: asset.context))),
                         queue: settings.queue, priority: 10, runAt: nil, maxAttempts: 3, dedupeKey: "serve:\(settings.cloudName):\(asset.publicID):\(identity)")
        let id = try database.submit([job])[0].id
        queued()
        guard let snapshot = try await waitForJob(id) else { throw ServeError(420, "The derivative is still being made: ask again shortly") }
        guard snapshot.state == .completed, let result = snapshot.result else {
            let message = snapshot.errors.last.flatMap { $0["detail"] }.flatMap { value -> String? in
                if case .string(let text) = value { return text }
                return nil
            } ?? snapshot.state.rawValue
            throw ServeError(400, "The transformation failed: \(message)")
        }
        guard let chosen = Self.smallestOutput(in: result) else { throw ServeError(500, "The job made no output") }
        let derivative = ServedDerivative(identity: identity, transformation: path.transformation, format: chosen.format, key: chosen.key,
                                          width: chosen.width, height: chosen.height, bytes: chosen.bytes, sha256: chosen.sha256, jobID: id)
        try database.recordDerivatives([derivative], cloud: asset.cloud, publicID: asset.publicID, version: asset.version)
        return try await serve(request, key: try StorageKey(derivative.key), etag: derivative.sha256, recordedFormat: derivative.format, answer: answer)
    }

    /// The output of a finished job to serve: the smallest, among those with alpha when any has
    /// it (a JPEG candidate has lost the alpha the others keep).
    static func smallestOutput(in result: JSONValue) -> (key: String, format: String, width: Int, height: Int, bytes: Int, sha256: String)? {
        guard case .array(let outputs)? = result["outputs"] else { return nil }
        typealias Found = (key: String, format: String, width: Int, height: Int, bytes: Int, sha256: String, alpha: Bool)
        let found: [Found] = outputs.compactMap { output in
            func int(_ name: String) -> Int? { if case .number(let n)? = output[name] { return n.intValue }; return nil }
            func string(_ name: String) -> String? { if case .string(let s)? = output[name] { return s }; return nil }
            guard let key = string("key"), let format = string("format").flatMap(OutputFormat.parse), let bytes = int("bytes") else { return nil }
            return (key, format.fileExtension, int("width") ?? 0, int("height") ?? 0, bytes, string("sha256") ?? "", output["hasAlpha"] == .bool(true))
        }
        let pool = found.contains(where: \.alpha) ? found.filter(\.alpha) : found
        return pool.min { $0.bytes < $1.bytes }.map { ($0.key, $0.format, $0.width, $0.height, $0.bytes, $0.sha256) }
    }

    /// The derivative recorded for a transformation and extension exactly as written (by an
    /// eager upload or an authorised delivery), found without reading the transformation.
    static func recorded(_ asset: ServedAsset, transformation: String, format: String) -> ServedDerivative? {
        asset.derivatives.values.filter { $0.transformation == transformation && $0.format == format }.min { $0.identity < $1.identity }
    }

    // MARK: Admin

    /// `GET /v1_1/<cloud>/resources/image/upload/<public_id>` with HTTP basic auth (key, secret).
    func resource(_ request: HTTPRequest, publicID: String) async throws -> HTTPResponse {
        try authorizeAdmin(request)
        let id = publicID.removingPercentEncoding ?? publicID
        guard Self.validPublicID(id), let found = try records.get(id) else { throw ServeError(404, "Resource not found - \(id)") }
        let asset = try reconciled(found)
        let base = base(request)
        var members = Self.assetJSON(asset, base: base, cloud: settings.cloudName)
        members.append(JSONMember(key: "derived", value: .array(asset.derivatives.sorted { $0.key < $1.key }.map { identity, derivative in
            let url = Self.url(base: base, cloud: settings.cloudName, transformation: derivative.transformation, version: asset.version,
                               publicID: asset.publicID, format: derivative.format)
            return .object([
                "transformation": .string(derivative.transformation + "/" + derivative.format),
                "format": .string(derivative.format), "bytes": .int(derivative.bytes), "width": .int(derivative.width), "height": .int(derivative.height),
                "id": .string(Self.derivedID(publicID: asset.publicID, identity: identity)), "url": .string(url), "secure_url": .string(Self.secure(url)),
            ])
        })))
        // Cloudinary's `faces` (asked with faces=true): the boxes a job's face detection found
        // in the original, [x, y, width, height] in its upright pixels; empty until a job looked
        // (an output with g_face, g_faces, g_auto or a face effect). The surer faces, those
        // face gravities use (not those below the crops' threshold that only privacy covers).
        if Self.flag(request.query["faces"]) == true {
            members.append(JSONMember(key: "faces", value: .array((asset.faces?.cropFaces ?? []).map { face in
                .array([.int(face.box.x), .int(face.box.y), .int(face.box.width), .int(face.box.height)])
            })))
        }
        if !asset.notifications.isEmpty {
            let notifications = asset.notifications
            members.append(JSONMember(key: "notifications", value: .array(notifications.map { record in
                .object([
                    "url": .string(record.url), "type": .string(record.type), "status": record.status.map(JSONValue.int) ?? .null,
                    "attempts": .int(record.attempts), "error": record.error.map(JSONValue.string) ?? .null,
                    "sent_at": .string(ISO8601DateFormatter().string(from: record.sentAt)),
                ])
            })))
        }
        return Self.json(.object(members))
    }
}

