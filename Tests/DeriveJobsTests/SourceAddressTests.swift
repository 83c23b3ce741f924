import DeriveLanguage
import DeriveJobs
import DeriveTestSupport
import Foundation
import Testing

/// Sources are parsed once, into what every fetcher, overlay loader and command decides by.
@Suite struct SourceAddressTests {
    @Test(arguments: [
        ("https://images.example/a.jpg?x=1", SourceAddress.web("https://images.example/a.jpg?x=1")),
        ("HTTP://images.example/a.jpg", .web("HTTP://images.example/a.jpg")),
        ("s3://my-bucket/photos/a%20b.jpg", .s3(bucket: "my-bucket", key: "photos/a b.jpg")),
        ("file:///srv/in/a.jpg", .fileURL(path: "/srv/in/a.jpg")),
        ("file://localhost/srv/in/a.jpg", .fileURL(path: "/srv/in/a.jpg")),
        ("data:image/png;base64,iVBOR", .data("data:image/png;base64,iVBOR")),
        ("/srv/in/a.jpg", .path("/srv/in/a.jpg")),
        ("photos/a.jpg", .path("photos/a.jpg")),
        ("brand/logo", .path("brand/logo")),
    ])
    func parses(text: String, expected: SourceAddress) throws {
        #expect(try SourceAddress(text) == expected)
    }

    @Test func localFilesAreFileURLsAndAbsolutePathsOnly() throws {
        #expect(try SourceAddress("/srv/a.jpg").localFile == "/srv/a.jpg" && SourceAddress("/srv/a.jpg").isAbsolutePath)
        #expect(try SourceAddress("file:///srv/a.jpg").localFile == "/srv/a.jpg")
        #expect(try SourceAddress("a.jpg").localFile == nil && !SourceAddress("a.jpg").isAbsolutePath)
        #expect(try SourceAddress("https://x.example/a.jpg").localFile == nil)
    }

    @Test(arguments: [
        ("ftp://files.example/a.jpg", "not ftp"),
        ("gopher://x/a", "not gopher"),
        ("s3://bucket", "s3://bucket/key"),
        ("s3:///key", "s3://bucket/key"),
        ("s3://Bad_Bucket/key", "is not an S3 bucket name"),
        ("file://elsewhere.example/etc/passwd", "is not a local file URL"),
    ])
    func refusesWhatDeriveDoesNotFetch(text: String, message: String) {
        do {
            let location = try SourceAddress(text)
            Issue.record("\(text) parsed as \(location)")
        } catch {
            #expect(error.code == .sourceRefused && !error.isRetryable && error.detail.contains(message), "\(error)")
        }
    }

    @Test func credentialsInARefusedURLAreNotRepeated() {
        #expect(throws: DeriveError.self) { try SourceAddress("ftp://user:secret@files.example/a.jpg") }
        do {
            _ = try SourceAddress("ftp://user:secret@files.example/a.jpg")
        } catch {
            #expect(!error.detail.contains("secret"), "\(error)")
        }
    }

    @Test func theSizeLimitReadsAtMostTheLimitWhicheverWayTheSizeIsLearnt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("derive-limit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let exact = folder.appendingPathComponent("exact.bin"), over = folder.appendingPathComponent("over.bin")
        try Data(repeating: 7, count: 100).write(to: exact)
        try Data(repeating: 7, count: 101).write(to: over)
        let limit = SourceSizeLimit(100)
        #expect(try limit.read(file: exact.path).count == 100)
        do {
            _ = try limit.read(file: over.path)
            Issue.record("read a file over the limit")
        } catch {
            #expect(error.code == .limitExceeded && error.detail == "\(over.path) is 101 bytes; the limit is 100 (DERIVE_MAX_INPUT_BYTES)")
        }
        // A file whose size the directory does not tell (a pipe, /proc) is counted as it is read.
        let fifo = folder.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let writer = Thread {
            if let handle = FileHandle(forWritingAtPath: fifo) {
                try? handle.write(contentsOf: Data(repeating: 1, count: 4096))
                try? handle.close()
            }
        }
        writer.start()
        do {
            _ = try limit.read(file: fifo)
            Issue.record("read a pipe past the limit")
        } catch {
            #expect(error.code == .limitExceeded && error.detail == "\(fifo) is larger than 100 bytes (DERIVE_MAX_INPUT_BYTES)")
        }
        do {
            _ = try limit.read(file: folder.appendingPathComponent("missing.jpg").path)
            Issue.record("read a missing file")
        } catch {
            #expect(error.code == .sourceRefused && error.detail.hasSuffix("no such file"))
        }
    }

    @Test func dataURIsAreHeldToTheSameLimitAndMessage() {
        let uri = "data:application/octet-stream;base64," + Data(repeating: 9, count: 300).base64EncodedString()
        do {
            _ = try DataURI.decode(uri, maxBytes: 100)
            Issue.record("decoded past the limit")
        } catch {
            #expect(error.code == .limitExceeded && error.detail == "the data URI is larger than 100 bytes (DERIVE_MAX_INPUT_BYTES)")
        }
    }
}
