import ArgumentParser
import DeriveLanguage
import DeriveJobs
import Foundation

struct Presets: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Named, versioned sets of outputs that jobs refer to (--preset, {\"preset\": ...}, t_name).",
        subcommands: [Add.self, List.self, Show.self, Remove.self]
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Save outputs under a name: a new version if the name exists. Jobs use the newest version."
        )

        @Argument(help: "The preset's name (A-Z a-z 0-9 . _ -).")
        var name: String

        @Option(name: .long, help: "The outputs: a JSON file, inline JSON, or a Cloudinary transformation string.")
        var chain: String

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("presets add") {
                guard Schedule.isValidName(name) else {
                    throw CLIError("a preset name is 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .), got \(name)")
                }
                let database = try openDatabase(try databaseOption.configuration().database).database
                let spec = try TransformationInput.parse(try chainText(chain))
                guard spec.preset == nil, !spec.outputs.isEmpty else { throw CLIError("--chain must give outputs, not name a preset") }
                _ = try JobResolver(catalog: DatabasePresetCatalog(store: database, ttl: 0)).resolve(spec)
                let version = try database.savePreset(name: name, outputs: .array(spec.outputs.map(ChainEncoder.json)))
                if output.json {
                    print(JSONWriter.compact(.object(["name": .string(name), "version": .int(version)])))
                } else {
                    print("preset \(name) version \(version) saved (\(spec.outputs.count) output\(spec.outputs.count == 1 ? "" : "s"))")
                }
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List presets (their newest versions).")

        @Flag(name: .long, help: "Include removed presets.")
        var all = false

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("presets list") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                let presets = try database.presets(includingRetired: all)
                if output.json {
                    print(JSONWriter.pretty(.array(presets.map(\.json))))
                    return
                }
                var table = [["name", "version", "outputs", "saved", ""]]
                for preset in presets {
                    table.append([preset.name, "\(preset.version)", preset.outputNames.joined(separator: ","), isoTime(preset.createdAt),
                                  preset.retiredAt == nil ? "" : "removed"])
                }
                if presets.isEmpty { print("No presets.") } else { printTable(table) }
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a preset's outputs.")

        @Argument(help: "The preset's name.")
        var name: String

        @Option(name: .long, help: "A version (default: the newest).")
        var version: Int?

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("presets show") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                let versions = try database.presetVersions(name)
                guard let preset = version.map({ wanted in versions.first { $0.version == wanted } }) ?? versions.first else {
                    throw CLIError(versions.isEmpty ? "there is no preset \(name)" : "preset \(name) has no version \(version!)")
                }
                if output.json {
                    print(JSONWriter.pretty(preset.json))
                } else {
                    print("preset \(preset.name) version \(preset.version) of \(versions.count), saved \(isoTime(preset.createdAt))"
                          + (preset.retiredAt == nil ? "" : ", removed"))
                    print(JSONWriter.pretty(preset.outputs))
                }
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove a preset: jobs naming it fail from now on; its versions stay on record."
        )

        @Argument(help: "The preset's name.")
        var name: String

        @OptionGroup var databaseOption: DatabaseOption
        @OptionGroup var output: OutputOption

        func run() throws {
            try reportingFailures("presets remove") {
                let database = try openDatabase(try databaseOption.configuration().database).database
                guard try database.retirePreset(name) else { throw CLIError("there is no preset \(name)") }
                print(output.json ? JSONWriter.compact(.object(["name": .string(name), "removed": .bool(true)])) : "preset \(name) removed")
            }
        }
    }
}

extension StoredPreset {
    var outputNames: [String] {
        guard case .array(let outputs) = outputs else { return [] }
        return outputs.compactMap { $0["name"]?.stringValue }
    }

    var json: JSONValue {
        .object([
            "name": .string(name), "version": .int(version), "outputs": outputs, "createdAt": .string(isoTime(createdAt)),
            "removedAt": retiredAt.map { .string(isoTime($0)) } ?? .null,
        ])
    }
}
