import DeriveDigest
import Foundation

/// Cloudinary's signatures, as its SDKs compute them (the PyPI package `cloudinary` 1.46,
/// `cloudinary/utils.py`): upload parameters (`api_sign_request`), delivery URLs
/// (`cloudinary_url` with `sign_url`) and notifications (`verify_notification_signature`).
public enum CloudinarySigning {
    /// The string an upload's signature covers: every non-empty parameter but those Cloudinary
    /// leaves out, as `name=value`, sorted, joined with `&`. Signature version 2 (the SDKs'
    /// default since 2025) writes `&` inside a value as `%26`, so a value cannot smuggle in a
    /// parameter; version 1 did not.
    public static func stringToSign(_ parameters: [String: String], version: Int) -> String {
        parameters.filter { !$0.value.isEmpty && !unsigned.contains($0.key) }
            .map { pair in
                let text = pair.key + "=" + pair.value
                return version >= 2 ? text.replacingOccurrences(of: "&", with: "%26") : text
            }
            .sorted()
            .joined(separator: "&")
    }

    /// Parameters sent but never signed (`file` is the content; the rest name the request).
    public static let unsigned: Set<String> = ["file", "api_key", "signature", "resource_type", "cloud_name", "signature_algorithm", "signature_version"]

    /// The hex signature of `parameters` under `secret`.
    public static func sign(_ parameters: [String: String], secret: String, algorithm: MessageDigest.Algorithm, version: Int = 2) -> String {
        MessageDigest.hex(stringToSign(parameters, version: version) + secret, algorithm)
    }

    /// Whether `signature` signs `parameters` under `secret`: with SHA-1 or SHA-256 (told apart
    /// by length), as signature version 2 or 1 (the request does not say which: both are
    /// tried, and they differ only when a value holds `&`).
    public static func verify(_ parameters: [String: String], signature: String, secret: String) -> Bool {
        let given = signature.lowercased()
        let algorithm: MessageDigest.Algorithm
        switch given.count {
        case 40: algorithm = .sha1
        case 64: algorithm = .sha256
        default: return false
        }
        for version in [2, 1] where constantTimeEqual(sign(parameters, secret: secret, algorithm: algorithm, version: version), given) {
            return true
        }
        return false
    }

    /// A delivery URL's signature component's inside (`s--<this>--`) for the path it covers
    /// (`<transformation>/<public_id>.<ext>`, no version): the first 8 characters of the
    /// URL-safe Base64 of SHA-1 (or SHA-256) of path and secret, or 32 of SHA-256 (the long
    /// form).
    public static func urlSignature(_ toSign: String, secret: String, algorithm: MessageDigest.Algorithm = .sha1, long: Bool = false) -> String {
        let digest = MessageDigest.digest(Array((toSign + secret).utf8), long ? .sha256 : algorithm)
        let base64 = Data(digest).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return String(base64.prefix(long ? 32 : 8))
    }

    /// Whether `signature` (between `s--` and `--`) signs `toSign`: 8 characters, SHA-1 or
    /// SHA-256; 32, SHA-256.
    public static func verifyURL(_ toSign: String, signature: String, secret: String) -> Bool {
        switch signature.count {
        case 8: constantTimeEqual(urlSignature(toSign, secret: secret, algorithm: .sha1), signature)
            || constantTimeEqual(urlSignature(toSign, secret: secret, algorithm: .sha256), signature)
        case 32: constantTimeEqual(urlSignature(toSign, secret: secret, long: true), signature)
        default: false
        }
    }

    /// `X-Cld-Signature` of a notification: hex of body, timestamp and secret.
    public static func notificationSignature(body: String, timestamp: Int, secret: String, algorithm: MessageDigest.Algorithm) -> String {
        MessageDigest.hex(body + String(timestamp) + secret, algorithm)
    }

    /// Equal strings, compared in time that does not depend on where they first differ.
    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
