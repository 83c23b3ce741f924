import DeriveLanguage

/// Everything Derive keeps in its database, PostgreSQL or SQLite: the queue, presets, live
/// workers, schedules, what reprocessing reads, what a worker reuses and what the dashboard shows of
/// assets. Each store implements all of it.
public typealias DeriveDatabase = JobStore & PresetStore & WorkerRegistry & QueueInspector & ScheduleStore & ReprocessStore & WriteLedger & RecordedWork & AssetCatalog & ServedAssets & ServedAssetCatalog & UploadMappings
