/// The boxes of a JP2 file (ISO/IEC 15444-1, annex I): each a 4-byte big-endian length (1: an
/// 8-byte length follows the type; 0: to the end of the file), a 4-byte type, its contents.
public enum JPEG2000Boxes {
    /// The contents of the top-level contiguous codestream box (`jp2c`): the bare codestream,
    /// starting with its SOC and SIZ markers (FF4F FF51); nil when there is none or a length
    /// runs past the file.
    public static func codestream(of file: [UInt8]) -> [UInt8]? {
        func u32(_ at: Int) -> Int { file[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        var offset = 0
        while offset + 8 <= file.count {
            var length = u32(offset)
            var header = 8
            if length == 1 {
                guard offset + 16 <= file.count else { return nil }
                let high = u32(offset + 8), low = u32(offset + 12)
                guard high == 0 else { return nil }
                length = low
                header = 16
            } else if length == 0 {
                length = file.count - offset
            }
            guard length >= header, offset + length <= file.count else { return nil }
            if file[(offset + 4)..<(offset + 8)].elementsEqual(Array("jp2c".utf8)) {
                let body = Array(file[(offset + header)..<(offset + length)])
                return body.starts(with: [0xFF, 0x4F, 0xFF, 0x51]) ? body : nil
            }
            offset += length
        }
        return nil
    }
}
