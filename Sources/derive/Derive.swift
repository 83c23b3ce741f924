import ArgumentParser
import Foundation

@main
struct Derive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "derive",
        abstract: "Derive image assets from sources with declarative transformation chains.",
        version: "0.1.0",
        subcommands: [Work.self, Submit.self, Upload.self, Status.self, Jobs.self, QueueCommand.self, Presets.self, Reprocess.self, Revalidate.self, ScheduleCommand.self, Prune.self, HealthCheck.self, Run.self, Explain.self, Faces.self, Score.self, Migrate.self, Dashboard.self, Serve.self]
    )

    /// SIGTERM and SIGINT start at their default (end the process) whatever the parent left:
    /// a parent that ignores them passes that on, and a worker signalled before it watches for
    /// them would then never stop. `derive work` watches for them from its first line.
    static func main() {
        signal(SIGTERM, SIG_DFL)
        signal(SIGINT, SIG_DFL)
        Self.main(nil)
    }
}
