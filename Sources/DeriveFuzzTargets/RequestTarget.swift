import DeriveJobs
import DeriveLanguage
import DeriveServe
import DeriveHTTP
import Foundation

/// `derive serve`'s router with everything behind it, in process: an in-memory queue, a folder
/// store in a temporary folder holding one uploaded photograph (`sample`, with one recorded
/// derivative), and a fetcher that fetches nothing. The fuzzer writes whole requests.
enum RequestTarget {
    static let cloud = "fuzzcloud"

    /// Built once a process: libFuzzer calls the target millions of times.
    static var service: CloudinaryService { fixture.service }

    /// The service, its queue and the sample asset, which `run` records again when an input
    /// deleted it (`destroy`, `delete_resources`): every input finds it there.
    static let fixture: (service: CloudinaryService, queue: MemoryJobQueue, sample: ServedAsset?) = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let store = FileAssetStore(root: folder)
        let queue = MemoryJobQueue()
        var sample: ServedAsset?
        // A one-pixel PNG stands in for the photograph: the router serves its bytes, it never decodes them.
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0,
                            0x1F, 0x15, 0xC4, 0x89, 0, 0, 0, 13, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0, 1, 0, 0, 5, 0, 1, 0x0D, 0x0A, 0x2D, 0xB4,
                            0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
        let sha = SHA256.hex(png)
        if let key = try? StorageKey("originals/\(sha).png"), let stored = try? store.put(png, key: key, contentType: "image/png") {
            let derivative = ServedDerivative(identity: (try? CloudinaryService.identity(transformation: "c_scale,w_10", format: "png")) ?? "",
                                              transformation: "c_scale,w_10", format: "png", key: stored.key.value, width: 1, height: 1,
                                              bytes: png.count, sha256: sha, jobID: 1)
            let asset = ServedAsset(cloud: cloud, publicID: "sample", version: 1_700_000_000, format: "png", width: 1, height: 1, bytes: png.count,
                                    sha256: sha, originalKey: stored.key.value, createdAt: Date(), tags: ["fuzz"],
                                    derivatives: [derivative.identity: derivative])
            _ = try? queue.recordUpload(asset, overwrite: true, eager: nil)
            sample = asset
        }
        var settings = ServeSettings(cloudName: cloud, credentials: ["123456789012345": "fuzz-secret"],
                                     presets: ["open": UploadPreset(unsigned: true)], maxUploadBytes: 1 << 20, wait: 0)
        // Millions of calls a run: an hourly limit would answer 420 before the Admin API's handlers.
        settings.adminRateLimit = .max
        return (CloudinaryService(settings: settings, database: queue, store: store, fetcher: NoFetching(), logger: .init(label: "fuzz")), queue, sample)
    }()

    /// `METHOD target` on the first line, headers one a line, an empty line, then the body.
    static func run(_ bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), Data(text[$0.upperBound...].utf8)) } ?? (text, Data())
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard !lines.isEmpty else { return }
        let requestLine = lines.removeFirst().split(separator: " ", maxSplits: 1).map(String.init)
        guard requestLine.count == 2, !requestLine[0].isEmpty else { return }
        let target = requestLine[1]
        var headers = HTTPHeaders()
        for line in lines {
            let parts = line.split(separator: ":", maxSplits: 1).map(String.init)
            if parts.count == 2 { headers[HTTPHeader(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        let request = HTTPRequest(method: HTTPMethod(requestLine[0]), target: target, headers: headers, body: HTTPRequestBody(body))
        if let sample = fixture.sample, (try? fixture.queue.servedAsset(cloud: cloud, publicID: sample.publicID)) == nil {
            _ = try? fixture.queue.recordUpload(sample, overwrite: false, eager: nil)
        }
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            _ = await service.respond(request)
            done.signal()
        }
        done.wait()
    }
}

/// The fuzzed service's fetcher: a remote source is refused, as the fetch rules refuse an
/// address they do not allow.
struct NoFetching: SourceFetcher {
    func fetch(_ source: String) throws(DeriveError) -> FetchedSource {
        throw DeriveError(.sourceRefused, "the fuzzed service fetches nothing")
    }

    func revalidate(_ source: String, etag: String?, lastModified: String?) throws(DeriveError) -> FetchedSource? {
        throw DeriveError(.sourceRefused, "the fuzzed service fetches nothing")
    }
}
