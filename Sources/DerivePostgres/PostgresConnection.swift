internal import CLibPQ
import DeriveLanguage
import DeriveJobs
import Foundation

/// An error from PostgreSQL or from reaching it, with its SQLSTATE when the server sent one.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The five-character SQLSTATE, or nil when the connection failed before the server answered.
    public var sqlState: String?
    public var message: String
    /// A row that did not decode (`DatabaseRow`), carried through a transaction as it is.
    public var underlying: DeriveError?

    public init(sqlState: String? = nil, message: String) {
        self.sqlState = sqlState
        self.message = message
    }

    public init(_ error: DeriveError) {
        self.init(sqlState: "XX000", message: error.detail)
        underlying = error
    }

    /// Runs decoding inside a transaction, whose closures throw `PostgresError`.
    public static func decoding<T>(_ body: () throws(DeriveError) -> T) throws(PostgresError) -> T {
        do { return try body() } catch { throw PostgresError(error) }
    }

    public var description: String { sqlState.map { "\(message) (SQLSTATE \($0))" } ?? message }

    /// Connection failures, server shutdowns, resource shortages, serialization failures,
    /// deadlocks and timeouts pass; the same statement can succeed later.
    public var isTransient: Bool {
        guard let state = sqlState else { return true }
        return state.hasPrefix("08") || state.hasPrefix("53") || state.hasPrefix("57P")
            || ["40001", "40P01", "55P03", "57014"].contains(state)
    }

    /// As Derive classifies it: bad data (class 22, 23) is the job's fault; everything else is
    /// the database's, retryable when transient.
    public var deriveError: DeriveError {
        if let underlying { return underlying }
        if let state = sqlState, state.hasPrefix("22") || state.hasPrefix("23") {
            return DeriveError(.invalidJob, "PostgreSQL refused the job: \(description)")
        }
        return DeriveError(.databaseUnavailable, "PostgreSQL: \(description)", retryable: isTransient)
    }
}

/// The rows a statement returned, as text (libpq's text format), by row then column.
public struct PostgresRows: Sendable {
    public var columns: [String]
    public var rows: [[String?]]

    public var count: Int { rows.count }

    /// The single value of a one-row, one-column result.
    public var scalar: String? { rows.first?.first ?? nil }

    /// The rows by column name, as text (`source` names them in errors).
    public func named(_ source: String) -> [DatabaseRow] {
        let named = DatabaseRow.Columns(columns)
        return rows.map { DatabaseRow(columns: named, values: $0.map { DatabaseValue($0) }, source: source) }
    }
}

/// A notification received on a channel the connection listens to.
public struct PostgresNotification: Sendable, Hashable {
    public var channel: String
    public var payload: String
}

/// One libpq connection. Used by one thread at a time (a `ConnectionPool` lends it to one
/// borrower), which is what makes the unchecked `Sendable` sound.
public final class PostgresConnection: @unchecked Sendable {
    private let raw: OpaquePointer
    /// Statements prepared on this connection, by SQL text: each hot statement is parsed and
    /// planned once per connection rather than once per call.
    private var prepared: [String: String] = [:]

    /// Connects with a `postgresql://` URL or a `key=value` string. Keepalives and a TCP user
    /// timeout make a vanished server an error within about 30 seconds instead of a hang.
    /// GSSAPI encryption is off unless the URL asks for it (`gssencmode=prefer`): with libpq's
    /// default every connect looks for Kerberos credentials, and a worker exiting while another
    /// thread connected aborted inside libkrb5 (its mutexes destroyed under the connecting
    /// thread: `r == 0`, status 6 in the fault suite). Kerberos authentication, when the
    /// server asks for it, is unaffected.
    public init(url: String, applicationName: String = "derive") throws(PostgresError) {
        let settings: [(String, String)] = [
            ("connect_timeout", "10"), ("application_name", applicationName), ("keepalives_idle", "15"),
            ("keepalives_interval", "5"), ("keepalives_count", "3"), ("tcp_user_timeout", "30000"), ("gssencmode", "disable"),
            // Last, so the caller's URL overrides the defaults above.
            ("dbname", url),
        ]
        let connection: OpaquePointer? = withCStrings(settings.map(\.0)) { keywords in
            withCStrings(settings.map(\.1)) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let connection else { throw PostgresError(message: "libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(message: "cannot connect to PostgreSQL at \(Redacted.connectionString(url)): \(message)")
        }
        raw = connection
        // Notices (NOTICE, WARNING) are not errors; do not print them on stderr.
        PQsetNoticeProcessor(raw, { _, _ in }, nil)
    }

    deinit { PQfinish(raw) }

    /// Whether the connection is open and outside any transaction: safe to lend again.
    public var isIdle: Bool {
        PQstatus(raw) == CONNECTION_OK && PQtransactionStatus(raw) == PQTRANS_IDLE
    }

    /// Runs one statement with text parameters (`$1`, `$2`...), prepared on first use.
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> PostgresRows {
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "derive_\(prepared.count)"
            let result = PQprepare(raw, name, sql, Int32(parameters.count), nil)
            defer { PQclear(result) }
            try check(result)
            prepared[sql] = name
        }
        let result: OpaquePointer? = withOptionalCStrings(parameters) { values in
            PQexecPrepared(raw, name, Int32(parameters.count), values, nil, nil, 0)
        }
        defer { PQclear(result) }
        try check(result)
        return Self.rows(result!)
    }

    /// Runs SQL that may hold several statements and no parameters (migrations, BEGIN, LISTEN).
    public func execute(_ sql: String) throws(PostgresError) {
        let result = PQexec(raw, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// Runs `body` in a transaction, committed if it returns and rolled back if it throws.
    public func transaction<T>(_ body: () throws(PostgresError) -> T) throws(PostgresError) -> T {
        try execute("BEGIN")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if PQstatus(raw) == CONNECTION_OK { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Waits up to `timeout` seconds for notifications on the channels this connection LISTENs
    /// to; returns at once with any already received.
    public func notifications(timeout: Double) throws(PostgresError) -> [PostgresNotification] {
        var received = try drainNotifications()
        guard received.isEmpty else { return received }
        var descriptor = pollfd(fd: PQsocket(raw), events: Int16(POLLIN), revents: 0)
        guard descriptor.fd >= 0 else { throw PostgresError(message: "the PostgreSQL connection is closed") }
        let ready = poll(&descriptor, 1, Int32(max(0, timeout) * 1000))
        if ready > 0 { received = try drainNotifications() }
        return received
    }

    private func drainNotifications() throws(PostgresError) -> [PostgresNotification] {
        guard PQconsumeInput(raw) == 1 else {
            throw PostgresError(message: "lost the PostgreSQL connection: \(Self.message(PQerrorMessage(raw)))")
        }
        var received: [PostgresNotification] = []
        while let notification = PQnotifies(raw) {
            received.append(PostgresNotification(channel: String(cString: notification.pointee.relname),
                                                 payload: String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return received
    }

    private func check(_ result: OpaquePointer?) throws(PostgresError) {
        guard let result else {
            throw PostgresError(message: "lost the PostgreSQL connection: \(Self.message(PQerrorMessage(raw)))")
        }
        let status = PQresultStatus(result)
        guard status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK else { return }
        let state = PQresultErrorField(result, 67 /* PG_DIAG_SQLSTATE, 'C' */).map { String(cString: $0) }
        var message = Self.message(PQresultErrorMessage(result))
        if message.isEmpty { message = Self.message(PQerrorMessage(raw)) }
        throw PostgresError(sqlState: state, message: message)
    }

    private static func rows(_ result: OpaquePointer) -> PostgresRows {
        let fields = PQnfields(result), tuples = PQntuples(result)
        let columns = (0..<fields).map { String(cString: PQfname(result, $0)) }
        var rows: [[String?]] = []
        rows.reserveCapacity(Int(tuples))
        for row in 0..<tuples {
            rows.append((0..<fields).map { field in
                PQgetisnull(result, row, field) == 1 ? nil : String(cString: PQgetvalue(result, row, field))
            })
        }
        return PostgresRows(columns: columns, rows: rows)
    }

    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        text.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
    }
}

/// Calls `body` with a C array of C strings that live for the call.
private func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    withOptionalCStrings(strings) { body($0) }
}

private func withOptionalCStrings<T>(_ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.flatMap { strdup($0) } }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { $0.map { UnsafePointer($0) } } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}
