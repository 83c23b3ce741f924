import Foundation

extension ParseRun {
    /// `e_distort:<x1>:<y1>:<x2>:<y2>:<x3>:<y3>:<x4>:<y4>` (whole pixels, or percentages of the
    /// image's side written `30p`) or `e_distort:arc:<degrees>`.
    mutating func distort(_ args: [String], in c: Component) -> Effect? {
        let forms = "e_distort takes four corners (e_distort:<x1>:<y1>:<x2>:<y2>:<x3>:<y3>:<x4>:<y4>, pixels or percentages such as 30p, clockwise from the top left) or an arc (e_distort:arc:<degrees>)"
        if args.first == "arc" {
            guard args.count == 2 else {
                fail(c, "e_distort:arc takes one angle in degrees (e_distort:arc:<degrees>)")
                return nil
            }
            guard let degrees = Int(args[1]) else {
                fail(c, "e_distort:arc takes whole degrees (-360 to 360), got \(Quoted(args[1]))")
                return nil
            }
            return .distort(.arc(degrees))
        }
        guard args.count == 8 else {
            fail(c, args.isEmpty ? forms : "\(forms); got \(args.count) numbers")
            return nil
        }
        var corners: [Length] = []
        for arg in args {
            if let n = Int(arg) {
                corners.append(.pixels(n))
            } else if arg.hasSuffix("p"), arg.count > 1, let percent = Double(arg.dropLast()), percent.isFinite,
                      arg.dropLast().allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "." || $0 == "-") }) {
                corners.append(.fraction(Decimal6.quantize(percent / 100)))
            } else {
                fail(c, "e_distort's corners are whole pixels or percentages (30p), got \(Quoted(arg))")
                return nil
            }
        }
        return .distort(.corners(corners))
    }
}
