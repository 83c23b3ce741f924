import DeriveLanguage

/// Sends a webhook: one POST, its status returned (no redirect followed), the target checked
/// by the same address rules as fetching. `derive serve`'s notifications go through it; the
/// CLI wires in libcurl's (DeriveCurl's `CurlFetcher`).
public protocol WebhookSender: Sendable {
    func post(_ url: String, body: [UInt8], headers: [String: String]) throws(DeriveError) -> Int
}
