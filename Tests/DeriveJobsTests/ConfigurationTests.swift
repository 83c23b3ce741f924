@testable import DeriveLanguage
@testable import DeriveJobs
import Foundation
import Testing

@Suite struct ConfigurationTests {
    let cwd = URL(fileURLWithPath: "/srv/derive")

    @Test func defaultsAreSafe() throws {
        let c = try Configuration.load([:], workingDirectory: cwd)
        #expect(c.engine.allowedLoaders.isEmpty && c.engine.sourceLimits == SourceLimits())
        // The folder store's own folder is the one file root: originals stored there are read back.
        #expect(c.fetch.addressPolicy == AddressPolicy() && c.fetch.s3 == nil)
        #expect(c.fetch.fileRoots == [URL(fileURLWithPath: "/srv/derive/derived")])
        #expect(c.database == .sqlite(path: "derive.sqlite") && c.worker == WorkerEnvironment())
        // Metrics and health on loopback unless told otherwise.
        #expect(c.worker.metricsAddress == "127.0.0.1")
        #expect(c.fetch.connectTimeout == 5 && c.fetch.totalTimeout == 30 && c.fetch.stallTimeout == 10 && c.fetch.maxRedirects == 5)
        #expect(c.store.location == .folder(URL(fileURLWithPath: "/srv/derive/derived")))
        #expect(c.store.keyTemplate == .default && c.cache == nil)
    }

    @Test func workerSettingsAreReadAndCheckedByName() throws {
        let c = try Configuration.load([
            "DERIVE_DATABASE_URL": "postgresql://derive@db/app", "DERIVE_QUEUES": "default, bulk", "DERIVE_SLOTS": "6", "DERIVE_LEASE": "120",
            "DERIVE_GRACE": "10", "DERIVE_POLL_INTERVAL": "0.5", "DERIVE_RESCUE_INTERVAL": "2", "DERIVE_METRICS_PORT": "9102",
            "DERIVE_METRICS_ADDRESS": "127.0.0.1", "DERIVE_LOG_FORMAT": "JSON", "DERIVE_LOG_LEVEL": "debug",
        ], workingDirectory: cwd)
        #expect(c.database == .postgres("postgresql://derive@db/app"))
        #expect(c.worker.queues == ["default", "bulk"] && c.worker.slots == 6 && c.worker.lease == 120 && c.worker.grace == 10)
        #expect(c.worker.pollInterval == 0.5 && c.worker.rescueInterval == 2 && c.worker.metricsPort == 9102)
        #expect(c.worker.metricsAddress == "127.0.0.1" && c.worker.logFormat == "json" && c.worker.logLevel == "debug")
        #expect(try Configuration.load(["DERIVE_SLOTS": "0"], workingDirectory: cwd).worker.slots == nil)

        do {
            _ = try Configuration.load(["DERIVE_DATABASE_URL": "mysql://db/x", "DERIVE_QUEUES": "ok,bad!name", "DERIVE_LEASE": "-1",
                                        "DERIVE_METRICS_PORT": "70000", "DERIVE_LOG_FORMAT": "xml", "DERIVE_LOG_LEVEL": "loud"],
                                       workingDirectory: cwd)
            Issue.record("bad worker settings were accepted")
        } catch {
            let names = Set(error.issues.map(\.location))
            #expect(names == ["DERIVE_DATABASE_URL", "DERIVE_QUEUES", "DERIVE_LEASE", "DERIVE_METRICS_PORT", "DERIVE_LOG_FORMAT", "DERIVE_LOG_LEVEL"],
                    "\(error)")
        }
    }

    @Test func everySettingIsRead() throws {
        let c = try Configuration.load([
            "DERIVE_ALLOW_LOADERS": "svg, pdf", "DERIVE_MAX_INPUT_BYTES": "1_000_000", "DERIVE_MAX_INPUT_PIXELS": "5000000",
            "DERIVE_MAX_FRAMES": "10", "DERIVE_VIPS_CONCURRENCY": "1",
            "DERIVE_FETCH_ALLOW": "10.0.0.0/8,images.internal", "DERIVE_FETCH_CONNECT_TIMEOUT": "2", "DERIVE_FETCH_TIMEOUT": "9.5",
            "DERIVE_FETCH_STALL_TIMEOUT": "3", "DERIVE_FETCH_MAX_REDIRECTS": "2", "DERIVE_FETCH_ATTEMPTS": "4",
            "DERIVE_FETCH_MAX_RETRY_AFTER": "20", "DERIVE_FETCH_USER_AGENT": "Acme/1", "DERIVE_FETCH_HOSTS": #"{"cdn.acme.com": {"bearer": "t"}}"#,
            "DERIVE_FILE_ROOTS": "/data/a:uploads", "DERIVE_CACHE_DIR": "cache", "DERIVE_CACHE_MAX_BYTES": "2048",
            "DERIVE_OVERLAY_BASE": "https://cdn.acme.com/overlays/", "DERIVE_STORE": "s3://acme-images/derived",
            "DERIVE_STORE_PUBLIC_URL": "https://img.acme.com", "DERIVE_CACHE_CONTROL": "public, max-age=60",
            "DERIVE_KEY_TEMPLATE": "{source_hash_short}/{identity_short}/{name}.{ext}", "AWS_ACCESS_KEY_ID": "AK", "AWS_SECRET_ACCESS_KEY": "SK",
            "AWS_REGION": "eu-west-1", "DERIVE_S3_PART_SIZE": "16777216", "DERIVE_S3_SOURCE_BUCKETS": "acme-uploads acme-images",
        ], workingDirectory: cwd)
        #expect(c.engine.allowedLoaders == [.svg, .pdf] && c.engine.sourceLimits.maxInputBytes == 1_000_000 && c.engine.concurrency == 1)
        #expect(c.fetch.maxBytes == 1_000_000 && c.fetch.addressPolicy.allowsHost("images.internal") && c.fetch.addressPolicy.allowedNetworks.count == 1)
        #expect(c.fetch.connectTimeout == 2 && c.fetch.totalTimeout == 9.5 && c.fetch.stallTimeout == 3 && c.fetch.maxRedirects == 2)
        #expect(c.fetch.attempts == 4 && c.fetch.maxRetryAfter == 20 && c.fetch.userAgent == "Acme/1" && c.fetch.hosts["cdn.acme.com"]?.bearer == "t")
        #expect(c.fetch.fileRoots.map(\.path) == ["/data/a", "/srv/derive/uploads"])
        #expect(c.cache?.directory.path == "/srv/derive/cache" && c.cache?.maxBytes == 2048)
        #expect(c.overlayBase == "https://cdn.acme.com/overlays/")
        #expect(c.store.location == .s3(bucket: "acme-images", prefix: "derived") && c.store.publicBaseURL == "https://img.acme.com")
        #expect(c.store.cacheControl == "public, max-age=60" && c.store.keyTemplate.text == "{source_hash_short}/{identity_short}/{name}.{ext}")
        let s3 = try #require(c.fetch.s3)
        #expect(s3.endpoint == "https://s3.eu-west-1.amazonaws.com" && !s3.pathStyle && s3.bucket == "acme-images" && s3.partSize == 16 << 20)
        #expect(c.fetch.s3SourceBuckets == ["acme-uploads", "acme-images"])
        #expect(!s3.description.contains("SK") && !s3.description.contains("AK"))
    }

    /// The q_auto encode budget and the f_auto formats, with their defaults and errors.
    @Test func autoQualityAndFormatSettingsAreRead() throws {
        let defaults = try Configuration.load([:], workingDirectory: cwd).engine
        #expect(defaults.qualityMaxEncodes == 16 && defaults.autoFormats == [.avif, .webp, .jpeg])
        let c = try Configuration.load(["DERIVE_QUALITY_MAX_ENCODES": "3", "DERIVE_AUTO_FORMATS": "webp, jpg"], workingDirectory: cwd).engine
        #expect(c.qualityMaxEncodes == 3 && c.autoFormats == [.webp, .jpeg])
        #expect(throws: ValidationError([
            ValidationIssue(location: "DERIVE_AUTO_FORMATS", reason: #"unknown format "auto"; allowable: jpeg, png, webp, avif, gif, jxl, tiff"#),
            ValidationIssue(location: "DERIVE_QUALITY_MAX_ENCODES", reason: "must be 1 or more, got 0"),
        ])) {
            try Configuration.load(["DERIVE_AUTO_FORMATS": "webp,auto", "DERIVE_QUALITY_MAX_ENCODES": "0"], workingDirectory: cwd)
        }
    }

    @Test func encoderEffortsAreRead() throws {
        let defaults = try Configuration.load([:], workingDirectory: cwd).engine
        #expect(defaults.efforts.isEmpty)
        let avif = EncodingSettings(OutputSettings(format: .avif))
        #expect(defaults.effort(for: avif, format: .avif) == (EngineSettings.defaultEfforts[.avif] ?? OutputFormat.avif.canonicalEffort, .frontier))
        let c = try Configuration.load(["DERIVE_AVIF_EFFORT": "6", "DERIVE_WEBP_EFFORT": "2"], workingDirectory: cwd).engine
        #expect(c.efforts == [.avif: 6, .webp: 2])
        #expect(c.effort(for: avif, format: .avif) == (6, .deployment))
        // An output's own effort wins over the deployment's.
        #expect(c.effort(for: EncodingSettings(OutputSettings(format: .avif, effort: 1)), format: .avif) == (1, .output))
        #expect(throws: ValidationError([
            ValidationIssue(location: "DERIVE_AVIF_EFFORT", reason: "must be 0–9, got 12"),
            ValidationIssue(location: "DERIVE_JXL_EFFORT", reason: #"must be a whole number of 0 or more, got "fast""#),
        ])) {
            try Configuration.load(["DERIVE_AVIF_EFFORT": "12", "DERIVE_JXL_EFFORT": "fast"], workingDirectory: cwd)
        }
    }

    @Test func everyBadValueIsReportedByName() {
        #expect(throws: ValidationError([
            ValidationIssue(location: "DERIVE_MAX_FRAMES", reason: #"must be a whole number of 0 or more, got "many""#),
            ValidationIssue(location: "DERIVE_ALLOW_LOADERS", reason: #"unknown loader "gif"; allowable: svg, pdf, jxl, jp2k, ppm, rad, openexr, magick"#),
            ValidationIssue(location: "DERIVE_STORE", reason: #"an S3 store is s3://bucket[/prefix] with a bucket name of 3 to 63 lowercase letters, digits, dots and hyphens, got "s3://Bad_Bucket""#),
            ValidationIssue(location: "DERIVE_FETCH_TIMEOUT", reason: #"must be a number of seconds above 0, got "-1""#),
            ValidationIssue(location: "DERIVE_FETCH_ALLOW", reason: #""10.0.0.0/99" is neither a host name nor an address range such as 10.0.0.0/8"#),
        ])) {
            try Configuration.load(["DERIVE_MAX_FRAMES": "many", "DERIVE_ALLOW_LOADERS": "svg,gif", "DERIVE_STORE": "s3://Bad_Bucket",
                                    "DERIVE_FETCH_TIMEOUT": "-1", "DERIVE_FETCH_ALLOW": "10.0.0.0/99"], workingDirectory: cwd)
        }
        #expect(throws: ValidationError(location: "DERIVE_STORE", reason: "an s3:// store needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")) {
            try Configuration.load(["DERIVE_STORE": "s3://bucket"], workingDirectory: cwd)
        }
    }
}
