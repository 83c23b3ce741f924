import DeriveLanguage
import DeriveTestSupport
import Foundation
import Testing

/// Every command's `--help` reads well at any width — each paragraph one line of source, for
/// the help formatter to wrap at the terminal's width, never a line break inside a sentence;
/// examples' comments aligned — and the README's command table and Docs/commands.md name the
/// commands and flags `--help` has.
@Suite struct HelpTextTests {
    struct Command: CustomStringConvertible, Sendable {
        var path: [String]
        /// Its long flags, `--json`, with `--help`.
        var flags: Set<String>
        var description: String { (["derive"] + path).joined(separator: " ") }
    }

    /// Every command and subcommand, from argument-parser's own dump of the command tree.
    static let commands: [Command] = {
        guard let result = try? DeriveBinary.run(["--experimental-dump-help"]), let tree = try? JSONParser().parse(result.stdout) else { return [] }
        var commands: [Command] = []
        func walk(_ command: JSONValue?, path: [String]) {
            guard let command else { return }
            var flags: Set<String> = ["--help"]
            if case .array(let arguments)? = command["arguments"] {
                for argument in arguments {
                    guard case .array(let names)? = argument["names"] else { continue }
                    for name in names where name["kind"] == .string("long") {
                        if case .string(let text)? = name["name"] { flags.insert("--" + text) }
                    }
                }
            }
            if !path.isEmpty, command["shouldDisplay"] != .bool(false) { commands.append(Command(path: path, flags: flags)) }
            if case .array(let subcommands)? = command["subcommands"] {
                for subcommand in subcommands {
                    guard case .string(let name)? = subcommand["commandName"], name != "help" else { continue }
                    walk(subcommand, path: path + [name])
                }
            }
        }
        walk(tree["command"], path: [])
        return commands
    }()

    static func help(_ command: Command, columns: Int) throws -> [String] {
        let result = try DeriveBinary.run(command.path + ["--help"], environment: ["COLUMNS": "\(columns)"])
        #expect(result.status == 0, "\(command) --help: \(result.stderr)")
        return result.stdout.components(separatedBy: "\n")
    }

    @Test func everyCommandIsListed() {
        let names = Self.commands.map(\.description)
        for expected in ["derive run", "derive work", "derive submit", "derive reprocess", "derive queue pause", "derive schedule add", "derive jobs list"] {
            #expect(names.contains(expected), "\(names)")
        }
    }

    /// At 2,000 columns the formatter wraps nothing, so every line break left in the overview
    /// is one the source wrote: a paragraph must be one line (then a blank line or an example),
    /// and an option's help must sit on its label's line (or the next, under a long label).
    @Test(arguments: commands)
    func noLineBreakInsideASentence(_ command: Command) throws {
        let lines = try Self.help(command, columns: 2000)
        let usage = try #require(lines.firstIndex { $0.hasPrefix("USAGE:") })
        let overview = Array(lines[..<usage])
        for (line, next) in zip(overview, overview.dropFirst()) where Self.isProse(line) && Self.isProse(next) {
            Issue.record("\(command) --help breaks a paragraph after: \(line.suffix(60))⏎\(next.prefix(40))")
        }
        for (index, line) in lines.enumerated().dropFirst(usage + 1) where line.hasPrefix(String(repeating: " ", count: 20)) {
            let label = lines[index - 1].trimmingCharacters(in: .whitespaces)
            #expect(!label.contains("  ") && !lines[index - 1].hasPrefix(String(repeating: " ", count: 20)),
                    "\(command) --help breaks an option's help: \(lines[index - 1])⏎\(line)")
        }
    }

    /// In each block of examples, the comments start in one column.
    @Test(arguments: commands)
    func examplesAreAligned(_ command: Command) throws {
        let lines = try Self.help(command, columns: 2000)
        let usage = try #require(lines.firstIndex { $0.hasPrefix("USAGE:") })
        var block: [String] = []
        for line in lines[..<usage] + [""] {
            if line.hasPrefix("  ") { block.append(line); continue }
            let columns = Set(block.compactMap { line in line.range(of: " # ").map { line.distance(from: line.startIndex, to: $0.lowerBound) } })
            #expect(columns.count <= 1, "\(command) --help: comments not aligned:\n\(block.joined(separator: "\n"))")
            block = []
        }
    }

    /// At 80 columns the formatter fills each paragraph's lines (`derive reprocess --help` once
    /// broke "below new submissions'⏎priority" and "waiting⏎for an⏎asset"), and every
    /// example fits on its line.
    @Test func helpWrapsAtTheTerminalsWidth() throws {
        let reprocess = try #require(Self.commands.first { $0.path == ["reprocess"] })
        let lines = try Self.help(reprocess, columns: 80)
        #expect(lines.allSatisfy { $0.count <= 80 }, "\(lines.filter { $0.count > 80 })")
        let usage = try #require(lines.firstIndex { $0.hasPrefix("USAGE:") })
        let paragraphs = lines[..<usage].split { !Self.isProse($0) }
        let discussion = try #require(paragraphs.first { $0.first?.hasPrefix("Queues one job") == true })
        #expect(discussion.joined(separator: " ").contains("below new submissions' priority and, with --spread or --rate, spread in time. A job already waiting for an asset"))
        // Every line but a paragraph's last is filled to within a word of the width.
        for paragraph in paragraphs {
            for line in paragraph.dropLast() { #expect(line.count >= 64, "a short line in a paragraph: \(line)") }
        }
    }

    /// No example is wider than an 80-column terminal, where the formatter would break it.
    @Test(arguments: commands)
    func examplesFitEightyColumns(_ command: Command) throws {
        let lines = try Self.help(command, columns: 2000)
        let usage = try #require(lines.firstIndex { $0.hasPrefix("USAGE:") })
        for line in lines[..<usage] where line.hasPrefix("  ") {
            #expect(line.count < 80, "\(command) --help has an example of \(line.count) columns: \(line)")
        }
    }

    /// Each row of Docs/commands.md's table names a command `--help` has, and only flags it
    /// takes; every command is in the table, and every top-level one in the README's.
    @Test func theCommandTablesMatchTheHelp() throws {
        let page = try String(contentsOf: Paths.repository.appendingPathComponent("Docs/commands.md"), encoding: .utf8)
        let readme = try String(contentsOf: Paths.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let rows = page.components(separatedBy: "\n").filter { $0.hasPrefix("| `derive ") }
        #expect(rows.count >= 15)
        let byName = Dictionary(Self.commands.map { ($0.description, $0) }) { first, _ in first }
        for row in rows {
            let named = Self.commandNames(in: row)
            #expect(!named.isEmpty, "a row naming no command: \(row.prefix(80))")
            let commands = named.compactMap { byName[$0] }
            #expect(commands.count == named.count, "\(named) in Docs/commands.md; derive has \(byName.keys.sorted())")
            // Every command's flags and its subcommands' (a row may describe a family).
            let flags = Set(commands.flatMap { command in Self.commands.filter { $0.path.starts(with: command.path) }.flatMap(\.flags) })
            for flag in Self.flags(in: row) where !flags.contains(flag) {
                Issue.record("Docs/commands.md names \(flag) for \(named.joined(separator: ", ")), whose --help does not have it")
            }
        }
        let documented = Set(rows.flatMap(Self.commandNames))
        for command in Self.commands where command.path.count == 1 {
            #expect(documented.contains(command.description) || documented.contains { $0.hasPrefix(command.description + " ") },
                    "\(command) is not in Docs/commands.md's table")
            #expect(readme.components(separatedBy: "\n").contains { $0.hasPrefix("| ") && $0.contains("`\(command.description)`") },
                    "\(command) is not in the README's command table")
        }
        for command in Self.commands where command.path.count == 2 {
            let family = rows.filter { row in Self.commandNames(in: row).contains { $0.hasPrefix("derive \(command.path[0])") } }
            #expect(family.contains { $0.range(of: "\\b\(command.path[1])\\b", options: .regularExpression) != nil },
                    "\(command) is not in Docs/commands.md's table")
        }
    }

    /// `derive queue pause NAME` / `derive queue resume NAME` -> the commands, longest names
    /// that are commands (`derive queue pause`, not `derive queue`).
    static func commandNames(in row: String) -> [String] {
        let cell = row.components(separatedBy: " | ").first ?? row
        var names: [String] = []
        let pattern = try! NSRegularExpression(pattern: "`derive((?: [a-z][a-z-]*)+)")
        for match in pattern.matches(in: cell, range: NSRange(cell.startIndex..., in: cell)) {
            var words = String(cell[Range(match.range(at: 1), in: cell)!]).split(separator: " ").map(String.init)
            while !words.isEmpty, !commands.contains(where: { $0.path == words }) { words.removeLast() }
            if !words.isEmpty { names.append((["derive"] + words).joined(separator: " ")) }
        }
        return names
    }

    static func flags(in row: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: "(?<![\\w-])--[a-z][a-z-]*")
        return pattern.matches(in: row, range: NSRange(row.startIndex..., in: row)).map { String(row[Range($0.range, in: row)!]) }
    }

    /// A line of a paragraph: text from the first column (examples are indented).
    static func isProse(_ line: String) -> Bool {
        guard let first = line.first else { return false }
        return first != " "
    }
}
