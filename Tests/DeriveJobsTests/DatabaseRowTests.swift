import DeriveLanguage
import DeriveJobs
import Foundation
import Testing

/// The row layer both stores read through: text (PostgreSQL) and typed values (SQLite) read
/// alike, and anything missing or of the wrong kind is the same internal error in both.
@Suite struct DatabaseRowTests {
    static let columns = ["id", "state", "run_at", "payload", "cancel_requested", "lease_owner"]

    @Test func textAndTypedValuesReadAlike() throws {
        let fromPostgres = DatabaseRow(columns: Self.columns, values: ["42", "running", "1800000000.5", #"{"a":1}"#, "t", .null], source: "jobs")
        let fromSQLite = DatabaseRow(columns: Self.columns, values: [42, "running", .real(1_800_000_000.5), #"{"a":1}"#, 1, .null], source: "jobs")
        for row in [fromPostgres, fromSQLite] {
            #expect(try row.int64("id") == 42 && row.value("state", as: JobState.self) == .running)
            #expect(try row.date("run_at") == Date(timeIntervalSince1970: 1_800_000_000.5))
            #expect(try row.json("payload") == .object(["a": .int(1)]) && row.bool("cancel_requested"))
            #expect(try row.optionalString("lease_owner") == nil && row.optionalDate("lease_owner") == nil)
        }
    }

    @Test(arguments: [
        ("run_id", "jobs has no column \"run_id\""),
        ("lease_owner", "jobs.lease_owner is not text: NULL"),
        ("state", "jobs.state is not an integer: the text \"running\""),
        ("payload", "jobs.payload is not a number: the text"),
    ])
    func whatIsMissingOrWrongIsAnInternalErrorNamingTheColumn(column: String, message: String) {
        let row = DatabaseRow(columns: Self.columns, values: [42, "running", .real(1), "{", 1, .null], source: "jobs")
        do {
            switch column {
            case "lease_owner": _ = try row.string(column)
            case "state": _ = try row.int(column)
            case "payload": _ = try row.date(column)
            default: _ = try row.int(column)
            }
            Issue.record("read \(column)")
        } catch {
            #expect(error.code == .internalError && !error.isRetryable && error.detail.hasPrefix(message), "\(error)")
        }
    }

    @Test func aRequiredTimeIsNeverADefault() {
        let row = DatabaseRow(columns: ["run_at"], values: [.null], source: "jobs")
        #expect(throws: DeriveError.self) { try row.date("run_at") }
        #expect(throws: DeriveError.self) { try row.value("state", as: JobState.self) }
    }

    @Test func anUnknownStateIsRefused() {
        let row = DatabaseRow(columns: ["state"], values: ["exploded"], source: "jobs")
        do {
            _ = try row.value("state", as: JobState.self)
            Issue.record("read an unknown state")
        } catch {
            #expect(error.detail == "jobs.state is not a JobState: the text \"exploded\"")
        }
    }
}
