import Foundation

/// 3D LUT files the tests write: what `l_lut:` reads (the parser's tests and the engine's).
public enum LutFiles {
    /// A .cube of size n whose output is f(r, g, b) (each 0–1), red fastest.
    public static func cube(_ n: Int, _ f: (Double, Double, Double) -> (Double, Double, Double)) -> String {
        var lines = ["LUT_3D_SIZE \(n)"]
        for b in 0..<n { for g in 0..<n { for r in 0..<n {
            let v = f(Double(r) / Double(n - 1), Double(g) / Double(n - 1), Double(b) / Double(n - 1))
            lines.append(String(format: "%.6f %.6f %.6f", v.0, v.1, v.2))
        } } }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A .3dl of size n at 12 bits, blue fastest, with its mesh line.
    public static func threeDL(_ n: Int, _ f: (Double, Double, Double) -> (Double, Double, Double)) -> String {
        var lines = [(0..<n).map { String($0 * 1023 / (n - 1)) }.joined(separator: " ")]
        for r in 0..<n { for g in 0..<n { for b in 0..<n {
            let v = f(Double(r) / Double(n - 1), Double(g) / Double(n - 1), Double(b) / Double(n - 1))
            lines.append("\(Int((v.0 * 4095).rounded())) \(Int((v.1 * 4095).rounded())) \(Int((v.2 * 4095).rounded()))")
        } } }
        return lines.joined(separator: "\n") + "\n"
    }
}
