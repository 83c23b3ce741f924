/// Everything Derive keeps in its database, PostgreSQL or SQLite: the queue, presets, live
/// workers, schedules, what reprocessing reads and what a worker reuses. Each store implements all of it.
public typealias DeriveDatabase = JobStore & PresetStore & WorkerRegistry & QueueInspector & ScheduleStore & ReprocessStore & WriteLedger & RecordedWork
