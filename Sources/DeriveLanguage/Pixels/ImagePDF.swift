/// A one-page PDF holding one JPEG image (Cloudinary's `f_pdf` of an image): the page is the
/// image's size at the output's density (72 dpi when none is given: one point a pixel), the JPEG
/// embedded as it is (`/DCTDecode`, which every PDF reader decodes), nothing else — no script,
/// no font, no link. Written here, without a PDF library: a catalogue, a page tree, the page, its
/// content stream (draw the image over the whole page) and the image, then the cross-reference
/// table with each object's byte offset.
public enum ImagePDF {
    /// The document. `components` is the JPEG's: 1 (grey), 3 (RGB) or 4 (CMYK, as Adobe writes
    /// it: inverted, so the image says `/Decode`).
    public static func document(jpeg: [UInt8], width: Int, height: Int, components: Int, dpi: Int? = nil) -> [UInt8] {
        let scale = 72 / Double(dpi ?? 72)
        func points(_ pixels: Int) -> String { Decimal6.string(Double(pixels) * scale) }
        let (w, h) = (points(width), points(height))
        let colorSpace = components == 1 ? "/DeviceGray" : components == 4 ? "/DeviceCMYK /Decode [1 0 1 0 1 0 1 0]" : "/DeviceRGB"
        let content = "q \(w) 0 0 \(h) 0 0 cm /Im0 Do Q\n"
        var out: [UInt8] = Array("%PDF-1.4\n%".utf8) + [0xE2, 0xE3, 0xCF, 0xD3, 0x0A]
        var offsets: [Int] = []
        func object(_ body: [UInt8]) {
            offsets.append(out.count)
            out += Array("\(offsets.count) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
        }
        object(Array("<< /Type /Catalog /Pages 2 0 R >>".utf8))
        object(Array("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8))
        object(Array("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(w) \(h)] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>".utf8))
        object(Array("<< /Type /XObject /Subtype /Image /Width \(width) /Height \(height) /ColorSpace \(colorSpace) /BitsPerComponent 8 /Filter /DCTDecode /Length \(jpeg.count) >>\nstream\n".utf8)
               + jpeg + Array("\nendstream".utf8))
        object(Array("<< /Length \(content.utf8.count) >>\nstream\n\(content)endstream".utf8))
        let xref = out.count
        var table = "xref\n0 \(offsets.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { table += String(repeating: "0", count: max(0, 10 - String(offset).count)) + String(offset) + " 00000 n \n" }
        table += "trailer\n<< /Size \(offsets.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        out += Array(table.utf8)
        return out
    }
}
