internal import CSQLite
import DeriveLanguage
import DeriveJobs
import Foundation

/// An error from SQLite, with its extended result code.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public var code: Int32
    public var message: String
    /// A row that did not decode (`DatabaseRow`), carried through a transaction as it is.
    public var underlying: DeriveError?

    public init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    public init(_ error: DeriveError) {
        self.init(code: SQLITE_MISUSE_CODE, message: error.detail)
        underlying = error
    }

    /// Runs decoding inside a transaction, whose closures throw `SQLiteError`.
    public static func decoding<T>(_ body: () throws(DeriveError) -> T) throws(SQLiteError) -> T {
        do { return try body() } catch { throw SQLiteError(error) }
    }

    public var description: String { "\(message) (SQLite error \(code))" }

    /// Locked or busy past the timeout, or out of memory/disk for now: the same call can
    /// succeed later.
    public var isTransient: Bool {
        [SQLITE_BUSY, SQLITE_LOCKED, SQLITE_NOMEM, SQLITE_IOERR, SQLITE_FULL, SQLITE_PROTOCOL].contains(code & 0xff)
    }

    public var deriveError: DeriveError {
        if let underlying { return underlying }
        if code & 0xff == SQLITE_CONSTRAINT {
            return DeriveError(.invalidJob, "the queue refused the job: \(description)")
        }
        return DeriveError(.databaseUnavailable, "SQLite: \(description)", retryable: isTransient)
    }
}

/// A value bound to or read from a statement: SQLite's storage classes are DeriveJobs'
/// `DatabaseValue`, the bind and row type both stores share.
public typealias SQLiteValue = DatabaseValue

/// One connection to a database file. Used by one thread at a time (a `ConnectionPool` lends
/// it to one borrower), which is what makes the unchecked `Sendable` sound.
public final class SQLiteConnection: @unchecked Sendable {
    private let raw: OpaquePointer
    /// Prepared statements by SQL text, reset and reused.
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating if needed) the file in WAL mode, so readers never block the writer and
    /// commits need no fsync each, and waits up to `busyTimeout` seconds for another process's
    /// write transaction before giving up.
    public init(path: String, busyTimeout: Double = 10) throws(SQLiteError) {
        var connection: OpaquePointer?
        let status = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot allocate"
            sqlite3_close_v2(connection)
            throw SQLiteError(code: status, message: "cannot open the queue database \(path): \(message)")
        }
        raw = connection
        sqlite3_extended_result_codes(raw, 1)
        sqlite3_busy_timeout(raw, Int32(busyTimeout * 1000))
        try execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
        sqlite3_create_function_v2(raw, "derive_source_host", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, sourceHost, nil, nil, nil)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(raw)
    }

    /// Outside any transaction: safe to lend again.
    public var isIdle: Bool { sqlite3_get_autocommit(raw) != 0 }

    /// Runs SQL that may hold several statements and no parameters.
    public func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(raw, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard status == SQLITE_OK else {
            throw SQLiteError(code: sqlite3_extended_errcode(raw), message: message.map { String(cString: $0) } ?? "failed")
        }
    }

    /// Runs one statement with `?` parameters and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ parameters: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
        let statement = try prepare(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, value) in parameters.enumerated() {
            let position = Int32(index + 1)
            let status: Int32
            switch value {
            case .null: status = sqlite3_bind_null(statement, position)
            case .integer(let number): status = sqlite3_bind_int64(statement, position, number)
            case .real(let number): status = sqlite3_bind_double(statement, position, number)
            case .text(let text): status = sqlite3_bind_text(statement, position, text, -1, transient)
            }
            guard status == SQLITE_OK else { throw lastError() }
        }
        var rows: [[SQLiteValue]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw lastError() }
            rows.append((0..<sqlite3_column_count(statement)).map { column in
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: .integer(sqlite3_column_int64(statement, column))
                case SQLITE_FLOAT: .real(sqlite3_column_double(statement, column))
                case SQLITE_NULL: .null
                default: .text(String(cString: sqlite3_column_text(statement, column)))
                }
            })
        }
    }

    /// Runs one statement and returns its rows by column name (`source` names them in errors).
    public func rows(_ sql: String, _ parameters: [DatabaseValue] = [], source: String) throws(SQLiteError) -> [DatabaseRow] {
        let values = try query(sql, parameters)
        guard let statement = statements[sql] else { return [] }
        let columns = (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
        let named = DatabaseRow.Columns(columns)
        return values.map { DatabaseRow(columns: named, values: $0, source: source) }
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { Int(sqlite3_changes(raw)) }

    /// Runs `body` in a write transaction, taken at once (BEGIN IMMEDIATE) so it waits for
    /// other writers up front instead of failing when it first writes.
    public func transaction<T>(_ body: () throws(SQLiteError) -> T) throws(SQLiteError) -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if !isIdle { try? execute("ROLLBACK") }
            throw error
        }
    }

    private func prepare(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(raw, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw lastError()
        }
        statements[sql] = statement
        return statement
    }

    private func lastError() -> SQLiteError {
        SQLiteError(code: sqlite3_extended_errcode(raw), message: String(cString: sqlite3_errmsg(raw)))
    }
}

/// `derive_source_host(text)`: `SourceAddress.host(of:)` in SQL, as PostgreSQL's
/// `derive.source_host` is, for the operator's host filter.
private func sourceHost(_ context: OpaquePointer?, _ count: Int32, _ arguments: UnsafeMutablePointer<OpaquePointer?>?) {
    guard count == 1, let argument = arguments?[0], sqlite3_value_type(argument) == SQLITE_TEXT, let text = sqlite3_value_text(argument),
          let host = SourceAddress.host(of: String(cString: text)) else {
        sqlite3_result_null(context)
        return
    }
    sqlite3_result_text(context, host, -1, transient)
}

/// SQLITE_TRANSIENT: SQLite copies the bound text before the call returns.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
