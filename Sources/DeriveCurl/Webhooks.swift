import DeriveJobs
import DeriveLanguage
import Foundation

extension CurlFetcher: WebhookSender {
    /// A POST to an http(s) URL under the fetch settings' address rules and timeouts; the
    /// answer's body is read up to 64 KB and dropped.
    public func post(_ url: String, body: [UInt8], headers: [String: String]) throws(DeriveError) -> Int {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host, !host.isEmpty else {
            throw DeriveError(.sourceRefused, "\(Redacted.url(url)) is not an http or https URL", retryable: false)
        }
        if let literal = IPAddress.parseHost(host), let reason = settings.addressPolicy.refusal(host: host, address: literal) {
            throw DeriveError(.sourceRefused, "refused \(Redacted.url(url)): \(reason)", retryable: false)
        }
        let lines = headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        let request = HTTPRequest(method: "POST", url: url, headers: lines, body: body, maxResponseBytes: 64 * 1024,
                                  connectTimeout: settings.connectTimeout, totalTimeout: settings.totalTimeout,
                                  stallTimeout: settings.stallTimeout, userAgent: settings.userAgent, policy: settings.addressPolicy)
        return try client.perform(request).status
    }
}
