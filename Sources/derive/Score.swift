import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveVips
import Foundation

struct Score: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the SSIMULACRA 2 score of an image against a reference, as q_auto measures it.",
        discussion: """
        100 means identical; about 90 is visually lossless, 70 high quality, 50 medium, 30 low. \
        Both images must have the same size; alpha is flattened on white.

          derive score original.png candidate.jpg
        """
    )

    @Argument(help: "The reference image.")
    var reference: String

    @Argument(help: "The distorted image, compared with the reference.")
    var distorted: [String]

    @OptionGroup var settings: SettingsOptions

    func run() throws {
        try reportingFailures("score") {
            let engine = try VipsEngine(settings: try settings.configuration(store: nil).engine)
            let original = try readBytes(reference)
            for path in distorted {
                let score = try engine.perceptualScore(reference: original, distorted: try readBytes(path))
                print(distorted.count == 1 ? String(format: "%.6f", score) : String(format: "%.6f\t%@", score, path))
            }
        }
    }

    func readBytes(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CLIError("cannot read \(path)") }
        return [UInt8](data)
    }
}
