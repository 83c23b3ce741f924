internal import CCrypto

/// One-shot SHA-1 and SHA-256 of a message through OpenSSL's libcrypto: what Cloudinary's
/// signatures are made of (upload parameters, delivery URLs, notifications). SHA-1 is there
/// because Cloudinary still signs with it by default, not for anything Derive chooses itself.
public enum MessageDigest {
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha1, sha256
    }

    public static func digest(_ message: [UInt8], _ algorithm: Algorithm) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let bytes = message.isEmpty ? [0] : message
        let done = bytes.withUnsafeBufferPointer { buffer in
            EVP_Digest(buffer.baseAddress, message.count, &output, &length, algorithm == .sha1 ? EVP_sha1() : EVP_sha256(), nil)
        }
        guard done == 1 else { fatalError("OpenSSL could not compute \(algorithm.rawValue) (out of memory)") }
        return Array(output.prefix(Int(length)))
    }

    public static func hex(_ message: String, _ algorithm: Algorithm) -> String {
        HMACSHA256.hex(digest(Array(message.utf8), algorithm))
    }
}
