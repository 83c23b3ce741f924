internal import CCrypto

/// HMAC-SHA256 (RFC 2104) through OpenSSL's libcrypto: the keyed hash SigV4 signs with.
/// OpenSSL 3's one-shot `HMAC()`, which (unlike the `HMAC_CTX` functions) is not deprecated.
public enum HMACSHA256 {
    public static let byteCount = 32

    public static func authenticate(_ message: [UInt8], key: [UInt8]) -> [UInt8] {
        precondition(key.count <= Int(Int32.max), "an HMAC key of more than 2 GiB")
        var code = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // Never a null pointer, even for an empty key or message: OpenSSL 3.0's HMAC() fails on
        // a null key (no key set), where an empty key is valid HMAC.
        let keyBytes = key.isEmpty ? [0] : key, messageBytes = message.isEmpty ? [0] : message
        let done = keyBytes.withUnsafeBytes { keyBuffer in
            messageBytes.withUnsafeBufferPointer { messageBuffer in
                HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(key.count), messageBuffer.baseAddress, message.count, &code, &length)
            }
        }
        guard done != nil, Int(length) == byteCount else {
            fatalError("OpenSSL could not compute HMAC-SHA256 (out of memory)")
        }
        return Array(code.prefix(byteCount))
    }

    public static func authenticate(_ message: String, key: [UInt8]) -> [UInt8] {
        authenticate(Array(message.utf8), key: key)
    }

    /// Lowercase hexadecimal, as SigV4 writes signatures.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }
}
