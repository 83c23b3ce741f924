internal import CVips
internal import CVipsShim
import DeriveLanguage
import Foundation

/// One owning reference to a `VipsImage`, released in `deinit`. Images are immutable values in
/// libvips, so every operation returns a new `VImage`.
final class VImage {
    let pointer: UnsafeMutablePointer<VipsImage>

    init(owning pointer: UnsafeMutablePointer<VipsImage>) {
        self.pointer = pointer
    }

    deinit {
        dvips_unref(pointer)
    }

    var width: Int { Int(vips_image_get_width(pointer)) }
    var height: Int { Int(vips_image_get_height(pointer)) }
    var bands: Int { Int(vips_image_get_bands(pointer)) }
    /// Radiance-coded images have four bands (RGB and a shared exponent) and no alpha.
    var hasAlpha: Bool { !isRadianceCoded && vips_image_hasalpha(pointer) != 0 }
    var size: Size { Size(width, height) }

    /// Height of one page or frame (the whole height for a single image).
    var pageHeight: Int { Int(vips_image_get_page_height(pointer)) }
    var pages: Int { max(1, height / max(1, pageHeight)) }
    var frameSize: Size { Size(width, pageHeight) }

    var interpretation: String {
        String(cString: vips_enum_nick(vips_interpretation_get_type(), Int32(vips_image_get_interpretation(pointer).rawValue)))
    }

    /// Radiance's packed RGBE coding, as radload gives it (rad2float unpacks it).
    var isRadianceCoded: Bool { vips_image_get_coding(pointer) == VIPS_CODING_RAD }

    var isEightBit: Bool { vips_image_get_format(pointer) == VIPS_FORMAT_UCHAR }

    func int(_ field: String) -> Int? {
        guard vips_image_get_typeof(pointer, field) != 0 else { return nil }
        var value: Int32 = 0
        guard vips_image_get_int(pointer, field, &value) == 0 else {
            vips_error_clear()
            return nil
        }
        return Int(value)
    }

    func ints(_ field: String) -> [Int]? {
        var values: UnsafeMutablePointer<Int32>?
        var count: Int32 = 0
        guard vips_image_get_typeof(pointer, field) != 0, vips_image_get_array_int(pointer, field, &values, &count) == 0, let values else {
            vips_error_clear()
            return nil
        }
        // The array belongs to the image.
        return UnsafeBufferPointer(start: values, count: Int(count)).map(Int.init)
    }

    func string(_ field: String) -> String? {
        guard vips_image_get_typeof(pointer, field) != 0, let text = dvips_image_get_as_string(pointer, field) else { return nil }
        defer { g_free(text) }
        return String(cString: text)
    }

    func has(_ field: String) -> Bool { vips_image_get_typeof(pointer, field) != 0 }

    func blob(_ field: String) -> [UInt8]? {
        guard has(field) else { return nil }
        var data: UnsafeRawPointer?
        var length = 0
        guard vips_image_get_blob(pointer, field, &data, &length) == 0, let data else {
            vips_error_clear()
            return nil
        }
        return [UInt8](UnsafeRawBufferPointer(start: data, count: length))
    }

    var fieldNames: [String] {
        guard let fields = dvips_image_fields(pointer) else { return [] }
        defer { g_strfreev(fields) }
        var names: [String] = []
        var cursor = fields
        while let name = cursor.pointee {
            names.append(String(cString: name))
            cursor += 1
        }
        return names
    }

    /// A copy with metadata changed; libvips images are shared, so changes go on a copy.
    func withMetadata(_ change: (UnsafeMutablePointer<VipsImage>) -> Void) throws(DeriveError) -> VImage {
        let copy = try VipsCall("copy").image("in", self).run().image("out")
        change(copy.pointer)
        return copy
    }

    /// The EXIF fields `fl_keep_attribution` keeps (Cloudinary: "the copyright related fields").
    static let attributionFields: Set<String> = ["exif-ifd0-Copyright", "exif-ifd0-Artist"]

    /// The fields an encoder writes as metadata when not stripping: the EXIF block, each EXIF
    /// field libvips builds one from and the camera's thumbnail it puts back in, XMP, IPTC,
    /// Photoshop resources, the ICC profile, and the text fields: TIFF's ImageDescription
    /// (tiffsave writes `image-description` as tag 270), PNG's text chunks (pngsave writes every
    /// `png-comment-N-key`), and GIF's and JPEG's comments.
    var metadataFields: [String] {
        fieldNames.filter {
            Self.metadataBlobs.contains($0) || $0.hasPrefix("exif-ifd") || $0.hasPrefix("png-comment-")
        }
    }

    static let metadataBlobs: Set<String> = [
        "exif-data", "jpeg-thumbnail-data", "xmp-data", "iptc-data", "ipct-data", "icc-profile-data", "photoshop-data",
        "image-description", "gif-comment", "jpeg-comment",
    ]

    /// A copy with no metadata at all.
    func strippingMetadata() throws(DeriveError) -> VImage {
        let fields = metadataFields
        return fields.isEmpty ? self : try removing(fields)
    }

    /// A copy with no metadata but the EXIF copyright and artist, byte for byte: every metadata
    /// field goes, and a new EXIF block holding only those two tags (`ExifAttribution`, read
    /// from the source's raw block) takes the old one's place. The savers' EXIF update (libvips
    /// 8.14 `vips__exif_update`) drops a tag that has no `exif-ifdN-` field and rebuilds one
    /// whose field differs from its own rendering of the tag, from libexif's display string
    /// ("X (Photographer) - [None] (Editor)"); so the two fields are set by libvips' own parser
    /// from the new block, which makes them agree and the tags pass through untouched. The
    /// saver still writes the orientation, resolution and size it owns.
    func keepingOnlyAttribution() throws(DeriveError) -> VImage {
        let attribution = blob("exif-data").flatMap { ExifAttribution(exif: $0) }
        let bare = try strippingMetadata()
        guard let block = attribution?.exifBlock else { return bare }
        let orientation = bare.int("orientation")
        let parsed = try bare.withMetadata { image in
            block.withUnsafeBytes { bytes in
                vips_image_set_blob_copy(image, "exif-data", bytes.baseAddress, bytes.count)
            }
            if vips__exif_parse(image) != 0 { vips_error_clear() }
        }
        // The parser also adds the fields of libexif's mandatory tags (resolution, versions,
        // colour space), an empty thumbnail and maybe an orientation: none of them the source's,
        // all of them the saver's to write.
        let extra = parsed.fieldNames.filter { ($0.hasPrefix("exif-ifd") && !Self.attributionFields.contains($0)) || $0 == "jpeg-thumbnail-data" }
        return try parsed.withMetadata { image in
            for field in extra { vips_image_remove(image, field) }
            if let orientation { Metadata.setInt(image, "orientation", orientation) } else { vips_image_remove(image, "orientation") }
        }
    }

    func removing(_ fields: [String]) throws(DeriveError) -> VImage {
        try withMetadata { image in
            for field in fields { vips_image_remove(image, field) }
        }
    }

    /// Reads the pixels of an 8-bit image that is in memory (after `inMemory()`), without copying.
    func withPixels<Result>(_ body: (PixelView) -> Result) throws(DeriveError) -> Result {
        guard isEightBit, let data = vips_image_get_data(pointer) else {
            throw DeriveError(.internalError, "the image's pixels are not in memory as 8-bit values")
        }
        let view = PixelView(width: width, height: height, bands: bands,
                             bytes: UnsafeRawBufferPointer(start: data, count: width * height * bands))
        return body(view)
    }

    /// The pixels as interleaved 8-bit values (the image must be small: this is for metadata).
    func pixelBuffer() throws(DeriveError) -> PixelBuffer {
        var length = 0
        guard let memory = dvips_image_write_to_memory(pointer, &length) else {
            throw DeriveError(.internalError, "could not read pixels: \(VipsRuntime.takeError())")
        }
        defer { g_free(memory) }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: memory, count: length))
        return PixelBuffer(width: width, height: height, bands: bands, pixels: bytes)
    }

    static func fromPixels(_ bytes: [UInt8], width: Int, height: Int, bands: Int) throws(DeriveError) -> VImage {
        let created = bytes.withUnsafeBytes { raw in
            dvips_image_new_from_memory_copy(raw.baseAddress, raw.count, Int32(width), Int32(height), Int32(bands))
        }
        guard let created else { throw DeriveError(.internalError, "could not make an image from memory: \(VipsRuntime.takeError())") }
        return VImage(owning: created)
    }
}

@available(*, unavailable)
extension VImage: Sendable {}

/// Metadata on a fresh copy of an image (see `VImage.withMetadata`).
enum Metadata {
    static func setInt(_ image: UnsafeMutablePointer<VipsImage>, _ field: String, _ value: Int) {
        dvips_image_set_int(image, field, Int32(clamping: value))
    }

    static func setInts(_ image: UnsafeMutablePointer<VipsImage>, _ field: String, _ values: [Int]) {
        let values = values.map { Int32(clamping: $0) }
        dvips_image_set_ints(image, field, values, Int32(values.count))
    }
}

/// Builds one libvips operation by name, sets its arguments, runs it through the operation
/// cache and reads its outputs. Argument errors and build errors become `DeriveError`s.
struct VipsCall {
    private var operation: UnsafeMutablePointer<VipsOperation>?
    private let name: String
    private var failure: String?
    /// Images passed in are kept alive until the call is done.
    private var retained: [VImage] = []

    init(_ name: String) {
        self.name = name
        self.operation = vips_operation_new(name)
        if operation == nil { failure = "unknown libvips operation \(name)" }
    }

    private mutating func check(_ status: Int32, _ argument: String) {
        if status != 0 && failure == nil { failure = "\(name).\(argument): \(VipsRuntime.takeError())" }
    }

    func int(_ argument: String, _ value: Int) -> VipsCall {
        var copy = self
        if let op = operation { copy.check(dvips_set_int(op, argument, Int32(clamping: value)), argument) }
        return copy
    }

    func double(_ argument: String, _ value: Double) -> VipsCall {
        var copy = self
        if let op = operation { copy.check(dvips_set_double(op, argument, value), argument) }
        return copy
    }

    func bool(_ argument: String, _ value: Bool) -> VipsCall {
        var copy = self
        if let op = operation { copy.check(dvips_set_bool(op, argument, value ? 1 : 0), argument) }
        return copy
    }

    func string(_ argument: String, _ value: String) -> VipsCall {
        var copy = self
        if let op = operation { copy.check(dvips_set_string(op, argument, value), argument) }
        return copy
    }

    func enumeration(_ argument: String, _ nick: String) -> VipsCall {
        var copy = self
        if let op = operation { copy.check(dvips_set_enum(op, argument, nick), argument) }
        return copy
    }

    func image(_ argument: String, _ value: VImage) -> VipsCall {
        var copy = self
        copy.retained.append(value)
        if let op = operation { copy.check(dvips_set_image(op, argument, value.pointer), argument) }
        return copy
    }

    func images(_ argument: String, _ values: [VImage]) -> VipsCall {
        var copy = self
        copy.retained += values
        var pointers: [UnsafeMutablePointer<VipsImage>?] = values.map(\.pointer)
        if let op = operation { copy.check(dvips_set_images(op, argument, &pointers, Int32(values.count)), argument) }
        return copy
    }

    func doubles(_ argument: String, _ values: [Double]) -> VipsCall {
        var copy = self
        if let op = operation { copy.check(dvips_set_doubles(op, argument, values, Int32(values.count)), argument) }
        return copy
    }

    /// `data` must stay valid for as long as any image made from this call is read.
    func blob(_ argument: String, _ data: UnsafeRawBufferPointer) -> VipsCall {
        var copy = self
        if let op = operation { copy.check(dvips_set_blob(op, argument, data.baseAddress, data.count), argument) }
        return copy
    }

    /// A memory source over `data`, which must stay valid as `blob`'s does.
    func memorySource(_ argument: String, _ data: UnsafeRawBufferPointer) -> VipsCall {
        var copy = self
        if let op = operation { copy.check(dvips_set_memory_source(op, argument, data.baseAddress, data.count), argument) }
        return copy
    }

    /// A blob that owns g_malloc'd `data` from here on (libvips frees it with the last image).
    func ownedBlob(_ argument: String, _ data: UnsafeMutableRawPointer, count: Int) -> VipsCall {
        var copy = self
        if let op = operation {
            copy.check(dvips_set_owned_blob(op, argument, data, count), argument)
        } else {
            g_free(data)
        }
        return copy
    }

    /// Builds the operation; the result reads its outputs and releases the operation.
    func run(failing code: DeriveError.Code = .internalError) throws(DeriveError) -> VipsResult {
        guard let created = operation else { throw DeriveError(code, failure ?? "libvips operation \(name) failed") }
        if let failure {
            vips_object_unref_outputs(UnsafeMutableRawPointer(created).assumingMemoryBound(to: VipsObject.self))
            dvips_unref(created)
            throw DeriveError(code, failure)
        }
        var op: UnsafeMutablePointer<VipsOperation>? = created
        guard dvips_build(&op) == 0, let built = op else {
            let message = VipsRuntime.takeError()
            dvips_unref(op)
            throw DeriveError(code, "\(name): \(message)")
        }
        return VipsResult(operation: built, name: name)
    }
}

/// The outputs of a built operation; owns it until released.
final class VipsResult {
    private let operation: UnsafeMutablePointer<VipsOperation>
    private let name: String

    init(operation: UnsafeMutablePointer<VipsOperation>, name: String) {
        self.operation = operation
        self.name = name
    }

    deinit {
        vips_object_unref_outputs(UnsafeMutableRawPointer(operation).assumingMemoryBound(to: VipsObject.self))
        dvips_unref(operation)
    }

    func image(_ argument: String) throws(DeriveError) -> VImage {
        guard let image = dvips_get_image(operation, argument) else {
            throw DeriveError(.internalError, "\(name) produced no \(argument)")
        }
        return VImage(owning: image)
    }

    func int(_ argument: String) -> Int {
        var value: Int32 = 0
        _ = dvips_get_int(operation, argument, &value)
        return Int(value)
    }

    func doubleOutput(_ argument: String) -> Double {
        var value = 0.0
        _ = dvips_get_double(operation, argument, &value)
        return value
    }

    /// The blob output, copied once into Swift.
    func blob(_ argument: String) throws(DeriveError) -> [UInt8] {
        var data: UnsafeRawPointer?
        var length = 0
        guard let blob = dvips_get_blob(operation, argument, &data, &length) else {
            throw DeriveError(.encodeFailed, "\(name) produced no \(argument)")
        }
        defer { dvips_blob_unref(blob) }
        guard let data else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: data, count: length))
    }
}

/// `withUnsafeBytes` erases typed throws; this keeps `DeriveError` through it.
func withBytes<Result>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(DeriveError) -> Result) throws(DeriveError) -> Result {
    do {
        return try bytes.withUnsafeBytes { buffer in try body(buffer) }
    } catch let error as DeriveError {
        throw error
    } catch {
        throw DeriveError(.internalError, "\(error)")
    }
}
