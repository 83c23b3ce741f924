import DeriveDigest
import DeriveJobs
import DeriveLanguage
import FlyingFox
import Foundation

extension CloudinaryService {
    /// A delivery URL's parts after `/<cloud>/image/upload/`.
    public struct DeliveryPath: Equatable, Sendable {
        public var signature: String?
        public var transformation: String
        public var version: Int?
        public var publicID: String
        public var format: String?
        /// What the signature covers: `<transformation>/<public_id>.<ext>` as written in the URL.
        public var signed: String
    }

    /// `[s--<sig>--/][<transformation>/...][v<version>/]<public_id>[.<ext>]`. With a version,
    /// everything between the signature and it is the transformation and everything after it
    /// the public id (the SDKs add `v1` to ids with folders); without one, the last segment is
    /// the public id.
    public static func parseDelivery(_ segments: [String]) throws -> DeliveryPath {
        var rest = segments
        guard !rest.isEmpty, !rest.contains(where: \.isEmpty) else { throw ServeError(404, "Resource not found") }
        var signature: String?
        if let first = rest.first, first.hasPrefix("s--"), first.hasSuffix("--"), first.count >= 6 {
            signature = String(first.dropFirst(3).dropLast(2))
            rest.removeFirst()
        }
        var version: Int?
        var transformationSegments: [String] = []
        var idSegments: [String] = []
        if let index = rest.firstIndex(where: { $0.count > 1 && $0.count < 12 && $0.hasPrefix("v") && $0.dropFirst().allSatisfy(\.isASCIIDigit) }),
           index < rest.count - 1 {
            version = Int(rest[index].dropFirst())
            transformationSegments = Array(rest[..<index])
            idSegments = Array(rest[(index + 1)...])
        } else {
            guard let last = rest.last else { throw ServeError(404, "Resource not found") }
            transformationSegments = Array(rest.dropLast())
            idSegments = [last]
        }
        guard !idSegments.isEmpty else { throw ServeError(404, "Resource not found") }
        var source = idSegments.joined(separator: "/")
        let signedSource = source
        var format: String?
        if let last = idSegments.last, let dot = last.lastIndex(of: "."), dot != last.startIndex {
            format = String(last[last.index(after: dot)...])
            source = String(source.dropLast(format!.count + 1))
        }
        let transformation = transformationSegments.joined(separator: "/")
        let publicID = source.removingPercentEncoding ?? source
        return DeliveryPath(signature: signature, transformation: transformation, version: version, publicID: publicID, format: format,
                            signed: transformation.isEmpty ? signedSource : transformation + "/" + signedSource)
    }

    func deliver(_ request: HTTPRequest, path segments: [String]) async throws -> HTTPResponse {
        let path = try Self.parseDelivery(segments)
        if let signature = path.signature {
            guard settings.credentials.values.contains(where: { CloudinarySigning.verifyURL(path.signed, signature: signature, secret: $0) }) else {
                throw ServeError(401, "Invalid signature")
            }
        }
        guard Self.validPublicID(path.publicID), var asset = try records.get(path.publicID) else { throw ServeError(404, "Resource not found") }
        let format = path.format ?? asset.format
        // The original, untouched.
        if path.transformation.isEmpty, format == asset.format || ImageFormat.parse(format) == ImageFormat.parse(asset.format) {
            let key = try StorageKey(asset.originalKey)
            return try await serve(request, key: key, etag: asset.sha256, mediaType: ImageFormat.parse(asset.format)?.mediaType, versioned: path.version == asset.version)
        }
        // Authorised before parsed: a signed URL (checked above) or a transformation on the allowed
        // list may be read by the language and get work done for it (Cloudinary's strict
        // transformations). Anyone else reaches no parser: they get a derivative already recorded
        // for the transformation exactly as they wrote it, or a refusal.
        guard path.signature != nil || settings.allowedTransformations.contains(path.transformation) else {
            var derivative = Self.recorded(asset, transformation: path.transformation, format: format)
            if derivative == nil {
                asset = try reconciled(asset)
                derivative = Self.recorded(asset, transformation: path.transformation, format: format)
            }
            guard let derivative else { throw ServeError(401, "Transformation \(Quoted(path.transformation)) is not allowed: sign the URL") }
            return try await serve(request, key: try StorageKey(derivative.key), etag: derivative.sha256,
                                   mediaType: ImageFormat.parse(derivative.format)?.mediaType, versioned: path.version == asset.version)
        }
        let derivation = try Self.derivation(path.transformation, format: format)
        if asset.derivatives[derivation.identity] == nil { asset = try reconciled(asset) }
        if let derivative = asset.derivatives[derivation.identity] {
            return try await serve(request, key: try StorageKey(derivative.key), etag: derivative.sha256,
                                   mediaType: OutputFormat.parse(derivative.format).map { _ in ImageFormat.parse(derivative.format)?.mediaType } ?? nil,
                                   versioned: path.version == asset.version)
        }
        let source = store.sourceLocation(of: try StorageKey(asset.originalKey))
        var output = derivation.spec
        output.name = "eager0"
        let job = NewJob(payload: ChainEncoder.json(JobSpec(source: source, outputs: [output], asset: AssetFacts(tags: asset.tags, context: asset.context))), queue: settings.queue, priority: 10, runAt: nil,
                         maxAttempts: 3, dedupeKey: "serve:\(settings.cloudName):\(asset.publicID):\(derivation.identity)")
        let id = try database.submit([job])[0].id
        let eager = EagerJob(jobID: id, outputs: [EagerOutput(transformation: derivation.transformation, format: format, identity: derivation.identity)])
        guard let updated = try await finish(eager, asset: asset), let derivative = updated.derivatives[derivation.identity] else {
            throw ServeError(420, "The derivative is still being made: ask again shortly")
        }
        return try await serve(request, key: try StorageKey(derivative.key), etag: derivative.sha256, mediaType: ImageFormat.parse(derivative.format)?.mediaType,
                               versioned: path.version == asset.version)
    }

    /// The derivative recorded for a transformation and extension exactly as written (by an
    /// eager upload or an authorised delivery), found without reading the transformation.
    static func recorded(_ asset: ServedAsset, transformation: String, format: String) -> ServedDerivative? {
        asset.derivatives.values.filter { $0.transformation == transformation && $0.format == format }.min { $0.identity < $1.identity }
    }

    /// A stored object, with its ETag and caching: a year, immutable, for a URL naming the
    /// asset's version (a new upload has a new version); a day otherwise. `If-None-Match` gets 304.
    func serve(_ request: HTTPRequest, key: StorageKey, etag: String, mediaType: String?, versioned: Bool) async throws -> HTTPResponse {
        let tag = "\"\(etag.prefix(32))\""
        var headers: HTTPHeaders = [
            HTTPHeader("ETag"): tag,
            HTTPHeader("Cache-Control"): versioned ? "public, max-age=31536000, immutable" : "public, max-age=86400",
            HTTPHeader("Content-Type"): mediaType ?? "application/octet-stream",
            HTTPHeader("X-Content-Type-Options"): "nosniff",
        ]
        if let match = request.headers[HTTPHeader("If-None-Match")], match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag || $0 == "*" }) {
            return HTTPResponse(statusCode: .notModified, headers: headers)
        }
        // With an S3 store and DERIVE_SERVE_REDIRECT=presigned: a redirect to a short-lived
        // presigned GET, so the bytes go from S3 to the client. The redirect may be reused for
        // half the URL's life (it is still valid then); the credentials never leave.
        if let seconds = settings.presignedRedirectSeconds, let location = store.temporaryURL(for: key, expiresIn: seconds) {
            return HTTPResponse(statusCode: .found, headers: HTTPHeaders([
                HTTPHeader("Location"): location, HTTPHeader("ETag"): tag, HTTPHeader("Cache-Control"): "private, max-age=\(seconds / 2)",
            ]))
        }
        let bytes: [UInt8]?
        do {
            bytes = try await Self.offPool { [store] () throws(DeriveError) -> [UInt8]? in try store.get(key) }
        } catch {
            throw ServeError(500, "The store could not be read")
        }
        guard let bytes else { throw ServeError(404, "Resource not found") }
        if request.method == .HEAD {
            headers[HTTPHeader("Content-Length")] = String(bytes.count)
            return HTTPResponse(statusCode: .ok, headers: headers)
        }
        return HTTPResponse(statusCode: .ok, headers: headers, body: Data(bytes))
    }

    // MARK: Admin

    /// `GET /v1_1/<cloud>/resources/image/upload/<public_id>` with HTTP basic auth (key, secret).
    func resource(_ request: HTTPRequest, publicID: String) async throws -> HTTPResponse {
        guard let authorization = request.headers[HTTPHeader("Authorization")], authorization.lowercased().hasPrefix("basic "),
              let decoded = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
              let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":") else {
            throw ServeError(401, "Must supply api_key")
        }
        let key = String(pair[..<colon]), secret = String(pair[pair.index(after: colon)...])
        guard let expected = settings.credentials[key], CloudinarySigning.constantTimeEqual(expected, secret) else {
            throw ServeError(401, "Invalid credentials")
        }
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
                "id": .string(String(identity.prefix(32))), "url": .string(url), "secure_url": .string(Self.secure(url)),
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

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
