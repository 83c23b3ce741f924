import DeriveHTTP
import DeriveJobs
import DeriveLanguage
import DeriveServe
import Foundation

/// The inputs Derive reads from people it does not trust, each as a function of bytes that a
/// coverage-guided fuzzer (libFuzzer, `Scripts/fuzz.sh`) drives and the test suite replays
/// (`FuzzCorpusTests`, over `Tests/Fuzz/`). A target returns normally for every input, whatever
/// the input's verdict: an error is an answer; a trap is the bug being looked for.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// A Cloudinary transformation string, parsed, printed back, and planned on two sources.
    case cloudinary
    /// A JSON job document (or outputs object, output, chain array), decoded and planned.
    case json
    /// A source's bytes through every reader Derive runs on them before libvips: the format
    /// sniffer, the header and EXIF reader, the truncation check, the ICC description, the
    /// Photoshop clipping paths of a JPEG or TIFF, a JPEG 2000 file's codestream, and a 3D LUT
    /// (`l_lut:`'s `.cube` and `.3dl` files are fetched sources too).
    case image
    /// A Photoshop document: the layer reader, a layer's composite, an embedded file.
    case psd
    /// A multipart/form-data upload body (and its Content-Type's boundary).
    case multipart
    /// An application/x-www-form-urlencoded body.
    case form
    /// A delivery URL's path after `/<cloud>/image/upload/`, split, and its transformation
    /// read as an authorised caller's would be.
    case delivery
    /// A whole HTTP request to `derive serve`'s router, with a recorded asset behind it.
    case request
    /// A Search API expression: parsed, evaluated on an asset, and compiled for both SQL stores.
    case search

    /// Runs one input through the target.
    public func run(_ bytes: [UInt8]) {
        switch self {
        case .cloudinary: Self.cloudinary(String(decoding: bytes, as: UTF8.self))
        case .json: Self.json(String(decoding: bytes, as: UTF8.self))
        case .image: Self.image(bytes)
        case .psd: Self.psd(bytes)
        case .multipart: Self.multipart(bytes)
        case .form: Self.form(bytes)
        case .delivery: Self.delivery(String(decoding: bytes, as: UTF8.self))
        case .request: RequestTarget.run(bytes)
        case .search: Self.search(String(decoding: bytes, as: UTF8.self))
        }
    }

    /// The sources every chain is planned against: a large rotated photograph and a one-pixel
    /// image with alpha (degenerate geometry is where arithmetic goes wrong).
    static let sources = [
        SourceFacts(format: .jpeg, width: 4000, height: 3000, orientation: 6),
        SourceFacts(format: .png, width: 1, height: 1, hasAlpha: true),
        SourceFacts(format: .gif, width: 300, height: 7, pages: 40, hasAlpha: true),
    ]

    static let planner = Planner(faces: FaceDetectionSettings(), detectorReadsCanvas: false)

    static func cloudinary(_ text: String) {
        guard let output = try? TransformationInput.output(named: "fuzz", transformation: text) else { return }
        plan(JobSpec(source: nil, outputs: [output]))
    }

    static func json(_ text: String) {
        guard let job = try? TransformationInput.parse(text) else { return }
        plan(job)
    }

    /// Everything a job does with a chain before it touches pixels: resolve, canonical form
    /// and identity, the printed string read again, the plan for each source.
    static func plan(_ job: JobSpec) {
        _ = JSONWriter.canonical(ChainEncoder.json(job))
        guard let resolved = try? JobResolver().resolve(job) else { return }
        for output in resolved.outputs {
            if let printed = try? CloudinaryPrinter.string(for: output) {
                _ = try? TransformationInput.output(named: "again", transformation: printed)
            }
        }
        for source in sources { _ = try? planner.plan(resolved, source: source) }
    }

    static func image(_ bytes: [UInt8]) {
        if let path = PhotoshopPaths.read(bytes).path() {
            _ = try? PathRaster.mask(path, width: 64, height: 48, evenOdd: false)
        }
        _ = JPEG2000Boxes.codestream(of: bytes)
        _ = ICCProfile.description(bytes)
        _ = ImageSniffer.icoLargest(bytes)
        _ = try? Lut3D.parse(bytes, name: "fuzz.cube")
        _ = try? Lut3D.parse(bytes, name: "fuzz.3dl")
        guard let format = ImageSniffer.format(of: bytes) else { return }
        _ = ImageSniffer.facts(of: bytes)
        _ = ImageSniffer.truncation(of: bytes, format: format)
    }

    /// A document of at most a million pixels, so that one input stays within the fuzzer's
    /// time per input; the reader's own work bound is what keeps a larger one in check.
    static func psd(_ bytes: [UInt8]) {
        guard let document = try? PhotoshopDocument(bytes, maxPixels: 1_000_000) else { return }
        let named = document.layers.prefix(3).map(\.name)
        if let layers = try? document.layers(named: named) { _ = try? document.composite(layers) }
        _ = try? document.embeddedFile(number: 1)
    }

    static func multipart(_ bytes: [UInt8]) {
        // The first line is the request's Content-Type; the rest is the body.
        let split = bytes.firstIndex(of: 0x0A) ?? bytes.count
        let contentType = String(decoding: bytes[..<split], as: UTF8.self)
        let body = Array(bytes[min(split + 1, bytes.count)...])
        guard let boundary = MultipartForm.boundary(contentType: contentType) else { return }
        _ = try? MultipartForm.parse(body, boundary: boundary)
    }

    static func form(_ bytes: [UInt8]) {
        _ = FormFields.parse(bytes)
        _ = FormFields.pairs(bytes)
    }

    static let searched = ServedAsset(cloud: "fuzz", publicID: "shop/shoes/red", version: 1, format: "jpg", width: 4000, height: 3000,
                                      bytes: 2_000_000, sha256: String(repeating: "a", count: 64), originalKey: "o",
                                      createdAt: Date(timeIntervalSince1970: 1_700_000_000), tags: ["sale", "shoes"], context: ["alt": "red"])

    static func search(_ text: String) {
        guard let expression = try? SearchExpression.parse(text, now: Date(timeIntervalSince1970: 1_700_000_000)) else { return }
        _ = expression.matches(searched)
        _ = SearchSQL.compile(expression, dialect: .postgres, offset: 1)
        _ = SearchSQL.compile(expression, dialect: .sqlite, offset: 1)
    }

    static func delivery(_ path: String) {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard let parsed = try? CloudinaryService.parseDelivery(segments) else { return }
        _ = try? CloudinaryService.derivation(parsed.transformation, format: parsed.format ?? "jpg")
    }
}
