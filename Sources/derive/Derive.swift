import ArgumentParser

@main
struct Derive: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "derive",
        abstract: "Derive image assets from sources with declarative transformation chains.",
        version: "0.1.0",
        subcommands: [Work.self, Submit.self, Upload.self, Status.self, Jobs.self, Presets.self, Reprocess.self, Revalidate.self, ScheduleCommand.self, Prune.self, HealthCheck.self, Run.self, Explain.self, Faces.self, Score.self, Migrate.self]
    )
}
