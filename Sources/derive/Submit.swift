import ArgumentParser
import DeriveLanguage
import DeriveJobs
import DeriveDigest
import DeriveTerminal
import DeriveWorker
import Foundation

/// What a submitted job does and how it is queued: shared by `submit` and `upload`.
struct JobOptions: ParsableArguments {
    @Option(name: .long, help: "Outputs: a JSON file, inline JSON, or a Cloudinary transformation string.")
    var chain: String?

    @Option(name: .long, help: "Outputs from a preset (see `derive presets`).")
    var preset: String?

    @Option(name: .long, help: "The queue (default: default).")
    var queue: String = "default"

    @Option(name: .long, help: "Higher runs first (default 0).")
    var priority: Int = 0

    @Option(name: .long, help: "When to run: an ISO 8601 time, or +SECONDS from now.")
    var runAt: String?

    @Option(name: .long, help: "Runs before the job fails for good (1 to 100, default 5).")
    var maxAttempts: Int = 5

    @Option(name: .long, help: "While a job with this key is waiting or running, do not enqueue another (one source only).")
    var dedupeKey: String?

    @Flag(name: .long, help: "Skip a job identical to one waiting or running (its document's hash is the dedupe key).")
    var dedupe = false

    @OptionGroup var asset: AssetOptions

    func runDate() throws -> Date? {
        guard let runAt else { return nil }
        if runAt.hasPrefix("+"), let seconds = Double(runAt.dropFirst()), seconds >= 0 { return Date().addingTimeInterval(seconds) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: runAt) { return date }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: runAt) { return date }
        throw CLIError("--run-at must be an ISO 8601 time (2026-11-21T18:00:00Z) or +SECONDS, got \(runAt)")
    }
}

/// Turns sources into queued jobs: local files are stored as originals first, every document is
/// validated (presets resolved against the database) before anything is enqueued, and jobs
/// go in batches, with a progress line per source on a terminal.
struct Submission {
    let options: JobOptions
    let database: any DeriveDatabase
    let store: any AssetStore
    let maxBytes: Int

    /// A submitted source: its job, and the original stored for it, if any.
    struct Submitted {
        var source: String
        var job: SubmitResult
        var original: StoredObject?
    }

    /// The queue and store the flags and environment name.
    static func open(_ options: JobOptions, database: DatabaseOption, store: String?) throws -> Submission {
        let configuration = try database.configuration(store: store)
        return Submission(options: options, database: try openDatabase(configuration.database).database, store: try makeStore(configuration),
                          maxBytes: configuration.engine.sourceLimits.maxInputBytes)
    }

    func submit(_ sources: [String], uploadOnly: Bool, quiet: Bool = false) throws -> [Submitted] {
        guard (options.chain == nil) != (options.preset == nil) else { throw CLIError("give --chain or --preset (one of them)") }
        guard QueueName.isValid(options.queue) else { throw CLIError("--queue \(options.queue) is not a queue name (1 to 64 of A-Z a-z 0-9 _ . -)") }
        guard (1...100).contains(options.maxAttempts) else { throw CLIError("--max-attempts must be 1 to 100") }
        guard options.dedupeKey == nil || sources.count == 1 else { throw CLIError("--dedupe-key names one job: give one source (or --dedupe)") }
        guard !sources.isEmpty else { throw CLIError("give at least one source (or --from FILE)") }
        let runAt = try options.runDate()
        let template = try jobTemplate()

        let progress = ProgressReporter(ProgressState(label: uploadOnly ? "uploading" : "submitting", unit: "jobs", total: sources.count,
                                                      counts: [.init("stored", hiddenAtZero: true), .init("already queued", colour: .yellow, hiddenAtZero: true)]),
                                        quiet: quiet)
        // The line goes when a source fails: the failure is the last thing said.
        defer { progress.clear() }
        var submitted: [Submitted] = []
        for batch in stride(from: 0, to: sources.count, by: 500).map({ Array(sources[$0..<min(sources.count, $0 + 500)]) }) {
            var jobs: [NewJob] = []
            var originals: [(String, StoredObject?)] = []
            for source in batch {
                progress.update { $0.current = Redacted.url(source) }
                let (location, original) = try resolveSource(source, uploadOnly: uploadOnly)
                progress.update {
                    $0.done += 1
                    if original != nil { $0[count: "stored"] += 1 }
                }
                var spec = template
                spec.source = location
                let document = ChainEncoder.json(spec)
                let key = options.dedupeKey ?? (options.dedupe ? "doc:" + SHA256.hex(JSONWriter.canonical(document)) : nil)
                // A local file's name is kept beside its stored original, to find its job by.
                jobs.append(NewJob(payload: document, queue: options.queue, priority: options.priority, runAt: runAt,
                                   maxAttempts: options.maxAttempts, dedupeKey: key,
                                   originalName: original == nil ? nil : URL(fileURLWithPath: source).lastPathComponent))
                originals.append((source, original))
            }
            let results = try database.submit(jobs)
            for ((source, original), result) in zip(originals, results) {
                submitted.append(Submitted(source: source, job: result, original: original))
            }
            let deduplicated = results.count { $0.deduplicated }
            progress.update {
                $0[count: "already queued"] += deduplicated
                $0.current = nil
            }
        }
        let line = progress.finish(verb: uploadOnly ? "uploaded and submitted" : "submitted")
        if !progress.shows && sources.count > 1 { printError(line) }
        return submitted
    }

    /// The job without its source, checked now so a typo fails here rather than in a worker.
    func jobTemplate() throws -> JobSpec {
        let catalog = DatabasePresetCatalog(store: database, ttl: 60)
        var spec: JobSpec
        if let preset = options.preset {
            spec = JobSpec(source: nil, preset: preset)
        } else {
            spec = try TransformationInput.parse(try chainText(options.chain!))
            guard spec.preset != nil || !spec.outputs.isEmpty else { throw CLIError("--chain has no outputs") }
        }
        spec.asset = try options.asset.applied(to: spec.asset)
        _ = try JobResolver(catalog: catalog).resolve(spec)
        return JobSpec(source: nil, outputs: spec.outputs, preset: spec.preset, asset: spec.asset)
    }

    /// A URL is submitted as it is; a local file is stored as an original, content-addressed
    /// (`originals/<sha256>.<ext>`), and the job names where the worker reads it back.
    func resolveSource(_ source: String, uploadOnly: Bool) throws -> (String, StoredObject?) {
        guard case .path = try SourceAddress(source) else {
            if uploadOnly { throw CLIError("\(Redacted.url(source)) is not a local file: `derive upload` stores files; use `derive submit` for URLs") }
            return (source, nil)
        }
        let stored = try Originals.store(file: URL(fileURLWithPath: source), in: store, maxBytes: maxBytes)
        return (stored.location, stored.object)
    }
}

struct Submit: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue jobs: one per source, with the same outputs.",
        discussion: """
        Sources are URLs (http, https, s3, file, data) or local files; a local file is first \
        stored in the asset store as an original (originals/<sha256>.<ext>) so any worker can \
        read it. The outputs come from --chain or --preset and are validated before anything is \
        queued. Prints each job's id; on a terminal, a progress line per source goes to standard \
        error meanwhile (--quiet: none).

          derive submit https://example.com/a.jpg --chain 'c_fill,w_400,h_400/f_webp'
          derive submit photos/*.jpg --preset web --priority 5
          find /srv/uploads -name '*.png' | derive submit --from - --preset web
        """
    )

    @Argument(help: "URLs or local image files.")
    var sources: [String] = []

    @Option(name: .customLong("from"), help: "Read more sources from a file, one per line (- for standard input).")
    var list: String?

    @OptionGroup var storeOption: StoreOption
    var store: String? { storeOption.store }

    @OptionGroup var job: JobOptions
    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var output: OutputOption
    @OptionGroup var progressOption: ProgressOption

    func run() throws {
        try reportingFailures("submit") {
            let all = sources + (try list.map(readSourceList) ?? [])
            let submitted = try Submission.open(job, database: databaseOption, store: store).submit(all, uploadOnly: false, quiet: progressOption.quiet)
            printSubmitted(submitted, json: output.json)
        }
    }
}

struct Upload: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Store original images in the asset store and queue their outputs.",
        discussion: """
        Each file is stored as originals/<sha256>.<ext> (large files in parts), then a job \
        derives its outputs from the stored copy: an upload with eager transformations, \
        self-hosted. Prints each job's id and where the original went; on a terminal, a progress \
        line per file goes to standard error meanwhile (--quiet: none).

          derive upload photo.jpg --preset web
          derive upload scans/*.tiff --chain job.json --store s3://assets/library
        """
    )

    @Argument(help: "Local image files.")
    var files: [String]

    @OptionGroup var storeOption: StoreOption
    var store: String? { storeOption.store }

    @OptionGroup var job: JobOptions
    @OptionGroup var databaseOption: DatabaseOption
    @OptionGroup var output: OutputOption
    @OptionGroup var progressOption: ProgressOption

    func run() throws {
        try reportingFailures("upload") {
            let submission = try Submission.open(job, database: databaseOption, store: store)
            printSubmitted(try submission.submit(files, uploadOnly: true, quiet: progressOption.quiet), json: output.json)
        }
    }
}

/// Sources one per line; blank lines and `#` comments are skipped.
func readSourceList(_ path: String) throws -> [String] {
    let text: String
    if path == "-" {
        text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
    } else {
        text = try readFile(path)
    }
    return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        .filter { !$0.isEmpty && !$0.hasPrefix("#") }
}

func printSubmitted(_ submitted: [Submission.Submitted], json: Bool) {
    if json {
        print(JSONWriter.pretty(.array(submitted.map { item in
            var members: [JSONMember] = [
                JSONMember(key: "source", value: .string(Redacted.url(item.source))), JSONMember(key: "id", value: .int(Int(item.job.id))),
                JSONMember(key: "deduplicated", value: .bool(item.job.deduplicated)),
            ]
            if let original = item.original {
                members.append(JSONMember(key: "original", value: .object(["key": .string(original.key.description), "url": .string(original.url),
                                                                            "bytes": .int(original.bytes)])))
            }
            return .object(members)
        })))
        return
    }
    for item in submitted {
        let note = item.job.deduplicated ? "  (already queued)" : ""
        let stored = item.original.map { "  stored as \($0.key)" } ?? ""
        print("job \(item.job.id)  \(Redacted.url(item.source))\(stored)\(note)")
    }
}
