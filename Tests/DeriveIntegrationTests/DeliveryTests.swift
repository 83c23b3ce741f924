import DeriveCurl
import DeriveDigest
import DeriveJobs
@testable import DeriveLanguage
import DeriveServe
import DeriveTestSupport
import Foundation
import Testing

/// Delivery's grammar and its per-request readings, without a server: the URL forms of the
/// pinned Python SDK's `cloudinary_url`, `Accept` classes, client hints, `Range` and HTTP dates.
@Suite struct DeliveryGrammarTests {
    typealias Reading = (transformation: String, publicID: String, version: Int?, format: String?, signed: String)

    static func readings(_ path: String, route: CloudinaryService.DeliveryRoute = .upload) throws -> [Reading] {
        let parsed = try CloudinaryService.parseDelivery(path.split(separator: "/", omittingEmptySubsequences: false).map(String.init), route: route)
        return parsed.readings.map { ($0.transformation, $0.publicID, $0.version, $0.format, $0.signed) }
    }

    @Test func versionlessFolderURLsAreReadAsTransformationThenFolders() throws {
        // A folder without a version: the SDK's force_version=False form (404 before issue 39).
        let folder = try Self.readings("p/gh.jpg")
        #expect(folder.count == 1 && folder[0].transformation == "" && folder[0].publicID == "p/gh" && folder[0].format == "jpg")
        let transformed = try Self.readings("w_300/p/gh.jpg")
        #expect(transformed.map(\.transformation) == ["w_300", ""])
        #expect(transformed.map(\.publicID) == ["p/gh", "w_300/p/gh"], "a folder named like a transformation is the second reading")
        #expect(transformed.allSatisfy { $0.signed == "w_300/p/gh.jpg" }, "every reading signs the same text")
        let chained = try Self.readings("c_scale,w_40/a_90/$w_10/t_thumb/folder/sub/id.png")
        #expect(chained[0].transformation == "c_scale,w_40/a_90/$w_10/t_thumb" && chained[0].publicID == "folder/sub/id")
        let versioned = try Self.readings("s--AbCdEf12--/c_fill,w_300/v1700000000/folder/id.webp")
        #expect(versioned[0].version == 1_700_000_000 && versioned[0].publicID == "folder/id" && versioned[0].signed == "c_fill,w_300/folder/id.webp")
        #expect(versioned.last?.publicID == "v1700000000/folder/id", "a folder named like a version is the other reading")
        let noExtension = try Self.readings("f_auto,q_auto/flat")
        #expect(noExtension[0].transformation == "f_auto,q_auto" && noExtension[0].publicID == "flat" && noExtension[0].format == nil)
        // The SEO form: the suffix names nothing; the extension is its.
        let suffixed = try Self.readings("s--xyzxyzxy--/c_scale,w_35/flat/six-people.jpg", route: .suffixed)
        #expect(suffixed[0].publicID == "flat" && suffixed[0].format == "jpg" && suffixed[0].signed == "c_scale,w_35/flat.jpg")
        #expect(throws: ServeError.self) { try Self.readings("flat.jpg", route: .suffixed) }
        #expect(throws: ServeError.self) { try Self.readings("w_10//x.jpg") }
    }

    @Test(arguments: [("c_fill,w_300", true), ("t_thumb", true), ("$w_100", true), ("if_w_gt_100", true), ("p", false), ("photos", false),
                      ("my_folder", false), ("w_", true), ("_w", false), ("c_fill,photos", false), ("", false)])
    func aSegmentIsATransformationByItsKeys(segment: String, expected: Bool) {
        #expect(CloudinaryService.looksLikeTransformation(segment) == expected)
    }

    @Test func theTransformationKeysAreTheLanguages() {
        #expect(CloudinaryService.transformationKeys == Set(CloudinaryVocabulary.cloudinaryParameters))
    }

    @Test(arguments: [
        ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", Set<OutputFormat>([.avif, .webp])),  // Chrome
        ("image/webp,image/png,image/svg+xml,image/*;q=0.8,video/*;q=0.8,*/*;q=0.5", [.webp]),  // Safari 15
        ("image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5", [.avif, .webp]),  // Firefox
        ("image/jpeg,image/gif;q=0.9", []), ("*/*", []), ("", []),
        ("image/jxl,image/avif;q=0,IMAGE/WEBP ; Q=0.5", [.jxl, .webp]),
        ("image/avif;q=zz,,;;,\u{7f}", [.avif]),
    ] as [(String, Set<OutputFormat>)])
    func acceptIsReadIntoAFewClasses(accept: String, formats: Set<OutputFormat>) {
        #expect(BrowserHints.acceptedFormats(accept) == formats)
    }

    @Test func clientHintsAreReadOrIgnored() {
        func hints(_ headers: [String: String]) -> BrowserHints { BrowserHints { name in headers.first { $0.key.lowercased() == name.lowercased() }?.value } }
        #expect(hints(["Sec-CH-Width": "412", "Width": "999", "Sec-CH-DPR": "2.625", "Save-Data": "on"]) == BrowserHints(saveData: true, width: 412, dpr: 2.625))
        #expect(hints(["width": "411.2", "dpr": "1"]) == BrowserHints(width: 412, dpr: 1))
        #expect(hints(["Width": "-5", "DPR": "0", "Save-Data": "off"]) == BrowserHints())
        #expect(hints(["Width": "1e9", "DPR": "nan"]) == BrowserHints())
        #expect(hints(["Width": "99999", "DPR": "11"]) == BrowserHints())
    }

    @Test func requestDependentPartsAreMadeConcrete() throws {
        let hints = BrowserHints(saveData: true, width: 412, dpr: 1.75)
        #expect(DeliveryDependencies.of("c_scale,w_auto/f_auto,q_auto") == [.width, .format, .saveData])
        #expect(DeliveryDependencies.of("q_auto:good,w_100") == [])
        #expect(try DeliveryVariant.rewrite("c_scale,w_auto/f_auto,q_auto", hints: hints, imageWidth: 1280) == "c_scale,w_500/f_auto,q_auto:eco")
        #expect(try DeliveryVariant.rewrite("c_scale,w_auto:50", hints: hints, imageWidth: 1280) == "c_scale,w_450")
        #expect(try DeliveryVariant.rewrite("c_scale,w_auto", hints: BrowserHints(width: 4000), imageWidth: 1280) == "c_scale,w_1280")
        #expect(try DeliveryVariant.rewrite("c_scale,w_auto:100:333", hints: BrowserHints(), imageWidth: 1280) == "c_scale,w_400")
        #expect(try DeliveryVariant.rewrite("c_scale,w_auto", hints: BrowserHints(), imageWidth: 1280) == "c_scale")
        #expect(try DeliveryVariant.rewrite("c_scale,dpr_auto,w_100", hints: hints, imageWidth: 1280) == "c_scale,dpr_2,w_100")
        #expect(try DeliveryVariant.rewrite("c_scale,dpr_auto,w_100", hints: BrowserHints(dpr: 9), imageWidth: 1280) == "c_scale,dpr_3,w_100")
        #expect(try DeliveryVariant.rewrite("c_scale,dpr_auto,w_auto", hints: hints, imageWidth: 1280) == "c_scale,w_500")
        #expect(try DeliveryVariant.rewrite("w_auto/dpr_auto", hints: BrowserHints(), imageWidth: 1280) == "")
        #expect(throws: ServeError.self) { try DeliveryVariant.rewrite("w_auto:breakpoints", hints: hints, imageWidth: 1280) }
        #expect(throws: ServeError.self) { try DeliveryVariant.rewrite("w_auto:x", hints: hints, imageWidth: 1280) }
    }

    @Test func fAutoChoosesAmongWhatTheBrowserShows() {
        let deployment: [OutputFormat] = [.avif, .webp, .jpeg]
        func candidates(_ accepted: Set<OutputFormat>, alpha: Bool = false, animated: Bool = false, auto: [OutputFormat] = deployment) -> [OutputFormat] {
            DeliveryVariant.candidates(accepted: accepted, autoFormats: auto, animated: animated, mayHaveAlpha: alpha)
        }
        #expect(candidates([.avif, .webp]) == [.avif, .webp, .jpeg])
        #expect(candidates([.webp]) == [.webp, .jpeg])
        #expect(candidates([]) == [.jpeg])
        #expect(candidates([], alpha: true) == [.jpeg, .png], "PNG keeps alpha for a JPEG-only browser")
        #expect(candidates([.webp], alpha: true) == [.webp, .jpeg])
        #expect(candidates([.webp], animated: true) == [.webp, .gif])
        #expect(candidates([], animated: true) == [.gif])
        #expect(candidates([.avif, .webp], auto: [.avif, .webp, .jxl, .jpeg]) == [.avif, .webp, .jpeg], "JPEG XL only where accepted")
        #expect(candidates([.jxl], auto: [.avif, .webp, .jxl, .jpeg]) == [.jxl, .jpeg])
    }

    @Test(arguments: [
        ("bytes=0-99", ByteRange.part(0..<100)), ("bytes=10-", .part(10..<1000)), ("bytes=-10", .part(990..<1000)),
        ("bytes=990-5000", .part(990..<1000)), ("bytes=-5000", .part(0..<1000)), ("bytes=1000-", .unsatisfiable),
        ("bytes=-0", .unsatisfiable), ("bytes=5-1", .whole), ("bytes=0-1,5-9", .whole), ("items=0-1", .whole),
        ("bytes=--1", .whole), ("bytes=a-b", .whole), ("bytes=", .whole), ("bytes=99999999999999999999-", .whole),
    ] as [(String, ByteRange)])
    func rangesAreOneOrWholeOrUnsatisfiable(header: String, expected: ByteRange) {
        #expect(ByteRange.parse(header, length: 1000) == expected)
    }

    @Test func httpDatesRoundTripAndAgreeWithTheFetchers() {
        #expect(IMFDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(IMFDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        for seconds in [0, 951_782_400, 1_767_323_045, 4_102_444_799, 1_709_164_800, 1_709_251_199] {
            #expect(IMFDate.parse(IMFDate.format(seconds)) == seconds)
            #expect(IMFDate.format(seconds) == DeriveJobs.HTTPDate.format(Date(timeIntervalSince1970: Double(seconds))))
        }
        #expect(IMFDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == nil)
        #expect(IMFDate.parse("Sun, 32 Nov 1994 08:49:37 GMT") == nil)
        #expect(IMFDate.parse("garbage") == nil)
    }
}

/// Delivery as browsers and the pinned Python SDK reach it, against the built `derive serve`
/// on the embedded SQLite queue it works itself: `f_auto` per browser, `q_auto` under
/// `Save-Data`, client hints, and every URL form `cloudinary_url` writes for an image.
@Suite(.serialized) struct DeliveryTests {
    @Test(.enabled(if: Python.has("cloudinary"), "needs the cloudinary package the test command installs"))
    func everyBrowserAndEveryURLFormOfTheSDK() throws {
        let folder = try ServeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = "sqlite:" + folder.appendingPathComponent("q.sqlite").path
        let preset = try DeriveBinary.run(["presets", "add", "thumb", "--chain", "c_scale,w_25", "--database", database])
        try #require(preset.status == 0, "\(preset.stderr)")
        let (server, port) = try ServeTests.start(folder, extra: ["DERIVE_SERVE_ALLOWED_TRANSFORMATIONS": "c_scale,f_auto,w_120|c_scale,q_auto,w_200"])
        defer { server.signal(SIGKILL) }
        let alpha = Paths.fixtures.appendingPathComponent("formats/png-palette-trns.png")
        try #require(FileManager.default.fileExists(atPath: alpha.path), "the shared fixtures hold \(alpha.path)")
        let out = try ServeTests.client(port, "delivery", extra: [alpha.path])

        // f_auto: each browser a format it shows, labelled as its bytes are, with Vary: Accept;
        // Chrome and Firefox (one class) share one derivative; the second answer is the same.
        let auto = out["auto"]
        let shows: [String: Set<String>] = ["chrome": ["image/avif", "image/webp", "image/jpeg"], "safari15": ["image/webp", "image/jpeg"],
                                            "firefox": ["image/avif", "image/webp", "image/jpeg"], "old": ["image/jpeg"]]
        for (browser, formats) in shows {
            for answer in auto[browser].array {
                #expect(answer["status"].int == 200, "\(browser): \(answer)")
                #expect(answer["content-type"].string == answer["sniffed"].string, "\(browser): the Content-Type is the bytes': \(answer)")
                #expect(answer["sniffed"].string.map(formats.contains) == true, "\(browser) shows it: \(answer)")
                #expect(answer["vary"].string?.contains("Accept") == true, "\(browser): \(answer)")
            }
            #expect(auto[browser][0]["etag"].string == auto[browser][1]["etag"].string, "\(browser): recorded and reused")
        }
        #expect(auto["chrome"][0]["etag"].string == auto["firefox"][0]["etag"].string, "one class: \(auto)")
        #expect(auto["old"][0]["sniffed"].string == "image/jpeg" && auto["old"][0]["size"].array.first?.int == 120, "\(auto["old"])")
        #expect(auto["chrome"][0]["etag"].string != auto["old"][0]["etag"].string)
        #expect(out["alpha"]["old"]["sniffed"].string == "image/png" && out["alpha"]["old"]["content-type"].string == "image/png",
                "alpha kept for a JPEG-only browser: \(out["alpha"])")
        #expect(out["alpha"]["safari15"]["sniffed"].string == "image/webp", "\(out["alpha"])")
        #expect(out["auto_garbage"]["status"].int == 200 && out["auto_garbage"]["content-type"].string == out["auto_garbage"]["sniffed"].string,
                "\(out["auto_garbage"])")
        #expect(out["auto_control"]["status"].int == 400, "\(out["auto_control"])")

        // q_auto honours Save-Data: a derivative of its own (q_auto:eco), fewer bytes.
        let quality = out["quality"], saveData = out["save_data"]
        #expect(quality["status"].int == 200 && saveData["status"].int == 200, "\(quality) \(saveData)")
        #expect(saveData["vary"].string?.contains("Save-Data") == true && quality["etag"].string != saveData["etag"].string)
        #expect((saveData["bytes"].int ?? .max) < (quality["bytes"].int ?? 0), "eco takes fewer bytes: \(quality) \(saveData)")

        // Client hints: rounded up to the step, capped at the image; Accept-CH asks for them.
        #expect(out["w_auto_hint"]["size"].array.first?.int == 500, "412 rounds up to 500: \(out["w_auto_hint"])")
        #expect(out["w_auto_width"]["size"].array.first?.int == 500, "\(out["w_auto_width"])")
        #expect(out["w_auto_hint"]["etag"].string == out["w_auto_width"]["etag"].string, "one variant for both hints")
        #expect(out["w_auto_hint"]["accept-ch"].string?.contains("Sec-CH-Width") == true && out["w_auto_hint"]["vary"].string?.contains("Width") == true)
        #expect(out["w_auto_none"]["size"].array.first?.int == 1280, "no hint: the image's own width: \(out["w_auto_none"])")
        #expect(out["w_auto_bad"]["status"].int == 200 && out["w_auto_bad"]["size"].array.first?.int == 1280, "\(out["w_auto_bad"])")
        #expect(out["dpr_auto_2"]["size"].array.first?.int == 200, "DPR 1.75 rounds up to 2: \(out["dpr_auto_2"])")
        #expect(out["dpr_auto_none"]["size"].array.first?.int == 100, "\(out["dpr_auto_none"])")
        #expect(out["dpr_auto_2"]["vary"].string?.contains("DPR") == true)

        // Versionless folder URLs (404 before), with a transformation signed; unsigned refused with the reason.
        #expect(out["folder_versionless"]["status"].int == 200 && out["folder_versionless"]["bytes"].int == ServeTests.imageBytes, "\(out["folder_versionless"])")
        #expect(out["folder_v1"]["status"].int == 200)
        #expect(out["folder_transformed"]["status"].int == 200 && out["folder_transformed"]["size"].array.first?.int == 30, "\(out["folder_transformed"])")
        #expect(out["folder_transformed_unsigned"]["status"].int == 401
                && out["folder_transformed_unsigned"]["x-cld-error"].string?.contains("sign the URL") == true, "\(out["folder_transformed_unsigned"])")
        // An overwritten asset: the old version's URL gets the current image, cached a day; the current a year.
        #expect(out["old_version"]["status"].int == 200 && out["old_version"]["cache-control"].string == "public, max-age=86400", "\(out["old_version"])")
        #expect(out["current_version"]["cache-control"].string?.contains("immutable") == true, "\(out["current_version"])")
        #expect(out["old_version"]["etag"].string == out["current_version"]["etag"].string)
        // An extension naming a format: a conversion, signed; refused unsigned, saying why.
        #expect(out["webp_signed"]["status"].int == 200 && out["webp_signed"]["content-type"].string == "image/webp"
                && out["webp_signed"]["sniffed"].string == "image/webp", "\(out["webp_signed"])")
        #expect(out["webp_unsigned"]["status"].int == 200 && out["webp_unsigned"]["etag"].string == out["webp_signed"]["etag"].string,
                "recorded under that spelling by the signed URL: \(out["webp_unsigned"])")
        #expect(out["png_unsigned"]["status"].int == 401 && out["png_unsigned"]["x-cld-error"].string?.contains(".png") == true, "\(out["png_unsigned"])")
        #expect(out["no_extension"]["status"].int == 200 && out["no_extension"]["content-type"].string == "image/jpeg", "\(out["no_extension"])")
        // Chained, named (a preset), raw.
        #expect(out["chained"]["sniffed"].string == "image/png" && out["chained"]["size"].array.compactMap(\.int).first.map { $0 < 40 } == true,
                "w_40 then a_90: taller than wide: \(out["chained"])")
        #expect(out["named"]["status"].int == 200 && out["named"]["size"].array.first?.int == 25, "t_thumb is the preset: \(out["named"])")
        #expect(out["named_unknown"]["status"].int == 400 && out["named_unknown"]["x-cld-error"].string?.contains("The transformation failed") == true
                && out["named_unknown"]["x-cld-error"].string?.contains("unknown preset") == true, "\(out["named_unknown"])")
        #expect(out["raw"]["size"].array.first?.int == 45, "\(out["raw"])")
        // The SDK's other routes.
        for form in ["suffix", "root", "root_folder", "shorten", "private_cdn"] {
            #expect(out[form]["status"].int == 200 && out[form]["content-type"].string == "image/jpeg", "\(form): \(out[form])")
        }
        #expect(out["suffix_signed"]["size"].array.first?.int == 35, "\(out["suffix_signed"])")
        #expect(out["private_type"]["status"].int == 404 && out["private_type"]["x-cld-error"].string?.contains("private") == true, "\(out["private_type"])")
        #expect(out["video"]["status"].int == 404 && out["video"]["x-cld-error"].string?.contains("images only") == true, "\(out["video"])")
        // HEAD, Range, conditionals.
        let whole = out["whole"]
        #expect(out["head"]["status"].int == 200 && out["head"]["bytes"].int == 0 && out["head"]["content-length"].string == String(ServeTests.imageBytes))
        #expect(out["range"]["status"].int == 206 && out["range"]["bytes"].int == 100
                && out["range"]["content-range"].string == "bytes 0-99/\(ServeTests.imageBytes)", "\(out["range"])")
        #expect(out["range_suffix"]["status"].int == 206 && out["range_suffix"]["bytes"].int == 10)
        #expect(out["range_past"]["status"].int == 416 && out["range_past"]["content-range"].string == "bytes */\(ServeTests.imageBytes)", "\(out["range_past"])")
        #expect(out["range_several"]["status"].int == 200 && out["range_stale"]["status"].int == 200)
        #expect(whole["accept-ranges"].string == "bytes" && whole["last-modified"].string != nil)
        #expect(out["etag_match"]["status"].int == 304 && out["modified_since"]["status"].int == 304, "\(out["etag_match"]) \(out["modified_since"])")
        #expect(out["modified_before"]["status"].int == 200)

        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
    }
}

/// `type=fetch` as the SDK writes it, from a loopback origin (a Python http.server over
/// Tests/Fixtures) that DERIVE_FETCH_ALLOW allows and DERIVE_SERVE_FETCH_DOMAINS lists: fetched
/// once and recorded (the second request is a store read: the origin sees one GET), transformed
/// when signed, refused unsigned for a transformation not allowed, for a host not listed, for a
/// private address the rules refuse even signed, and for an origin's 404 or a non-image.
extension DeliveryTests {
    /// A loopback origin: Python's http.server over Tests/Fixtures, its request log in
    /// `folder/origin.log` (each GET a line, to count fetches by).
    static func startOrigin(_ folder: URL) throws -> (origin: Process, port: Int, log: URL) {
        let port = try ServeTests.freePort()
        let log = folder.appendingPathComponent("origin.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let origin = Process()
        origin.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        origin.arguments = ["python3", "-m", "http.server", String(port), "--bind", "127.0.0.1",
                            "--directory", Paths.repository.appendingPathComponent("Tests/Fixtures").path]
        origin.standardError = try FileHandle(forWritingTo: log)
        try origin.run()
        return (origin, port, log)
    }

    @Test(.enabled(if: Python.has("cloudinary"), "needs the cloudinary package the test command installs"))
    func fetchDeliveryFromAnAllowedLoopbackOrigin() throws {
        let folder = try ServeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (origin, originPort, log) = try Self.startOrigin(folder)
        // SIGKILL: the test process ignores SIGTERM (and SIGINT), and its children inherit that.
        defer { kill(origin.processIdentifier, SIGKILL); origin.waitUntilExit() }
        let (server, port) = try ServeTests.start(folder, extra: ["DERIVE_FETCH_ALLOW": "127.0.0.1/32", "DERIVE_SERVE_FETCH_DOMAINS": "127.0.0.1"])
        defer { server.signal(SIGKILL) }
        try waitUntil("the origin listens", timeout: 30) {
            RawHTTP.sendBlocking(RawHTTP.request("GET", "/README.md"), port: originPort, timeout: 2).status == 200
        }
        let out = try ServeTests.client(port, "fetch", extra: [String(originPort)])
        let plain = out["plain"].array
        #expect(plain.count == 2 && plain.allSatisfy { $0["status"].int == 200 && $0["bytes"].int == ServeTests.imageBytes }, "\(out["plain"])")
        #expect(plain.first?["content-type"].string == "image/jpeg" && plain.first?["etag"].string == plain.last?["etag"].string)
        let fetches = try String(contentsOf: log, encoding: .utf8).components(separatedBy: "GET /group-of-six.jpg").count - 1
        #expect(fetches == 1, "fetched once, then read from the store (plain and transformed): \(fetches)")
        #expect(out["unsigned_transformed"]["status"].int == 401, "\(out["unsigned_transformed"])")
        #expect(out["signed_transformed"].array.allSatisfy { $0["status"].int == 200 && $0["size"].array.first?.int == 50 }, "\(out["signed_transformed"])")
        #expect(["image/webp", "image/jpeg"].contains(out["auto"]["content-type"].string ?? "") && out["auto"]["content-type"].string == out["auto"]["sniffed"].string
                && out["auto"]["vary"].string?.contains("Accept") == true, "Safari 15's f_auto: the smaller of WebP and JPEG: \(out["auto"])")
        #expect(out["other_domain"]["status"].int == 401 && out["other_domain"]["x-cld-error"].string?.contains("DERIVE_SERVE_FETCH_DOMAINS") == true,
                "\(out["other_domain"])")
        #expect(out["private_address"]["status"].int == 400 && out["private_address"]["x-cld-error"].string?.contains("loopback") == true,
                "the address rules hold for signed URLs: \(out["private_address"])")
        #expect(out["missing"]["status"].int == 404, "\(out["missing"])")
        #expect(out["not_image"]["status"].int == 400, "\(out["not_image"])")
        #expect(out["forged"]["status"].int == 401, "\(out["forged"])")
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 30) == 0)
    }
}

/// Malformed `Accept`, client hints, `Range` and dates never stop delivery nor make it fail
/// (5xx): they are ignored (RFC 9110 lets a server ignore a bad `Range`) or refused with a 4xx,
/// in process, against a recorded asset and a derivative that depends on the browser.
@Suite struct DeliveryHeaderFaultTests {
    /// A `CloudinaryService` in process on the memory queue and a folder store, with the test
    /// photograph recorded as `p/gh` (version 1767323045), and no worker.
    static func serviceWithOnePhoto(_ folder: URL, wait: Double) throws -> (service: CloudinaryService, database: MemoryJobQueue, image: [UInt8]) {
        let store = FileAssetStore(root: folder)
        let database = MemoryJobQueue()
        let image: [UInt8] = Array(try Data(contentsOf: Paths.repository.appendingPathComponent("Tests/Fixtures/group-of-six.jpg")))
        let sha = SHA256.hex(image)
        let original = try store.put(image, key: try StorageKey("originals/\(sha).jpg"), contentType: "image/jpeg")
        let asset = ServedAsset(cloud: ServeTests.cloud, publicID: "p/gh", version: version, format: "jpg", width: 1280, height: 886, bytes: image.count,
                                sha256: sha, originalKey: original.key.value, createdAt: Date(), tags: [], context: [:])
        _ = try database.recordUpload(asset, overwrite: true, eager: nil)
        let service = CloudinaryService(settings: ServeSettings(cloudName: ServeTests.cloud, credentials: [ServeTests.key: ServeTests.secret], wait: wait),
                                        database: database, store: store, fetcher: try CurlFetcher(settings: FetchSettings()), logger: .init(label: "delivery"))
        return (service, database, image)
    }

    static let version = 1_767_323_045

    @Test func malformedHeadersAreIgnoredOrRefusedAndTheServiceStaysUp() async throws {
        let folder = try ServeTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (service, _, image) = try Self.serviceWithOnePhoto(folder, wait: 0.2)
        let version = Self.version
        let server = try await ServeServer.start(service: service, port: 0)
        let signedWidth = "s--" + CloudinarySigning.urlSignature("c_scale,w_auto:x/p/gh.jpg", secret: ServeTests.secret) + "--"
        let paths = ["/\(ServeTests.cloud)/image/upload/p/gh.jpg", "/\(ServeTests.cloud)/image/upload/v\(version)/p/gh.jpg",
                     "/\(ServeTests.cloud)/images/p/gh/seo.jpg", "/\(ServeTests.cloud)/p/gh.jpg", "/image/upload/p/gh.jpg",
                     "/\(ServeTests.cloud)/image/upload/f_auto/p/gh.jpg", "/\(ServeTests.cloud)/image/upload/w_auto,c_scale/p/gh.jpg",
                     "/\(ServeTests.cloud)/image/upload/\(signedWidth)/c_scale,w_auto:x/p/gh.jpg", "/\(ServeTests.cloud)/images/gh.jpg",
                     "/\(ServeTests.cloud)/image/fetch/https://example.com/x.jpg", "/\(ServeTests.cloud)/video/upload/x.mp4"]
        let headers: [[(String, String)]] = [
            [("Accept", String(repeating: "image/avif;q=", count: 300))], [("Accept", "\u{0}\u{1},;;;q=-1,image/webp;q=1e400")],
            [("Sec-CH-Width", "-1"), ("Width", "NaN")], [("Sec-CH-DPR", "1e308"), ("DPR", "..")], [("Width", String(repeating: "9", count: 300))],
            [("Save-Data", String(repeating: "on", count: 300))],
            [("Range", "bytes=-")], [("Range", "bytes=18446744073709551615-")], [("Range", "bytes=0-0,"+String(repeating: "1-2,", count: 300))],
            [("Range", "bytes=5-1")], [("Range", "bytes=0-99"), ("If-Range", "\u{7f}")], [("Range", "bytes=\(image.count)-")],
            [("If-Modified-Since", "Sun, 99 Nov 99999 99:99:99 GMT")], [("If-Modified-Since", String(repeating: "a ", count: 300))],
            [("If-None-Match", String(repeating: ",", count: 300))],
        ]
        for (index, path) in paths.enumerated() {
            for set in headers {
                for method in index < 2 ? ["GET", "HEAD"] : ["GET"] {
                    let reply = await RawHTTP.send(RawHTTP.request(method, path, headers: set), port: server.port)
                    let status = try #require(reply.status, "no answer to \(method) \(path) with \(set.map(\.0))")
                    #expect(status < 500 && status != 420, "\(method) \(path) with \(set.map { "\($0.0): \($0.1.prefix(40))" }): \(status) \(reply.text.suffix(200))")
                }
            }
        }
        // What each of them answers when well formed, for the record.
        let unsatisfiable = await RawHTTP.send(RawHTTP.request("GET", paths[0], headers: [("Range", "bytes=\(image.count)-")]), port: server.port)
        #expect(unsatisfiable.status == 416)
        let badWidth = await RawHTTP.send(RawHTTP.request("GET", paths[7]), port: server.port)
        #expect(badWidth.status == 400, "\(badWidth.text.suffix(200))")
        let unsignedAuto = await RawHTTP.send(RawHTTP.request("GET", paths[5]), port: server.port)
        #expect(unsignedAuto.status == 401, "f_auto never derived for anyone: \(unsignedAuto.text.suffix(200))")
        #expect(await RawHTTP.send(RawHTTP.request("GET", "/healthz"), port: server.port).status == 200)
        await server.stop()
    }
}
