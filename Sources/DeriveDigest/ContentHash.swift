internal import CCrypto

/// SHA-256 of content (sources and outputs) through OpenSSL's libcrypto, which uses the CPU's
/// SHA instructions: several times faster than plain Swift on megabytes of image data.
/// Identity hashes of short canonical texts stay in DeriveLanguage's pure `SHA256`.
public struct ContentHash: ~Copyable {
    private let context: OpaquePointer

    public init() {
        guard let context = EVP_MD_CTX_new() else {
            fatalError("OpenSSL could not allocate a digest context (out of memory)")
        }
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    public consuming func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        let digits = Array("0123456789abcdef")
        return String(digest.prefix(Int(length)).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] })
    }

    public static func sha256(_ bytes: [UInt8]) -> String {
        var hash = ContentHash()
        hash.update(bytes)
        return hash.finalizeHex()
    }
}
