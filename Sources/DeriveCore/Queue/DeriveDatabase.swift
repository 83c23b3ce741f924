/// Everything Derive keeps in its database, PostgreSQL or SQLite: the queue, presets, live
/// workers, schedules and what reprocessing reads. Each store implements all of it.
public typealias DeriveDatabase = JobStore & PresetStore & WorkerRegistry & QueueInspector & ScheduleStore & ReprocessStore & WriteLedger
