import CLibPQ
import Glibc

/// What PostgreSQL (or the way to it) said: its own message, as an operator reads it.
struct PostgresError: Error, CustomStringConvertible {
    let description: String
    /// The SQLSTATE where PostgreSQL gave one (42P01: no such table, 42601: a syntax error…).
    var state: String?
}

/// One libpq connection, used by one thread at a time: statements prepared once and run with
/// their parameters as text, results read as text with their columns' types, and `LISTEN`'s
/// notifications read from its socket.
final class PostgresConnection {
    private let connection: OpaquePointer

    /// Connects by a libpq connection string (`host=/run/postgresql dbname=app`, or a
    /// `postgresql://` URI).
    init(_ conninfo: String) throws(PostgresError) {
        guard let connection = PQconnectdb(conninfo) else { throw PostgresError(description: "libpq could not allocate a connection") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(description: message)
        }
        // PostgreSQL's notices (a connection terminated by an administrator…) would go to
        // standard error past the log; each failure they tell of is logged where it is met.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        self.connection = connection
    }

    deinit { PQfinish(connection) }

    /// Whether the connection still stands (libpq says so once a call failed on it).
    var isOpen: Bool { PQstatus(connection) == CONNECTION_OK }

    /// Prepares `query` as statement `name`; answers how many parameters it takes. Fails as
    /// PostgreSQL would run it: a syntax error, a missing table or column, a permission.
    func prepare(_ name: String, _ query: String) throws(PostgresError) -> Int {
        try check(PQprepare(connection, name, query, 0, nil), expecting: PGRES_COMMAND_OK).close()
        let described = try check(PQdescribePrepared(connection, name), expecting: PGRES_COMMAND_OK)
        defer { described.close() }
        return Int(PQnparams(described.result))
    }

    /// Runs prepared statement `name` with `parameters` (text; nil is NULL).
    func execute(prepared name: String, _ parameters: [String?]) throws(PostgresError) -> PostgresRows {
        let result = Self.withCStrings(parameters) { values in
            PQexecPrepared(connection, name, Int32(values.count), values.baseAddress, nil, nil, 0)
        }
        return try check(result, expecting: PGRES_TUPLES_OK)
    }

    /// Runs a statement with no parameters that answers rows (`EXPLAIN …`).
    func execute(rows statement: String) throws(PostgresError) -> PostgresRows {
        try check(PQexec(connection, statement), expecting: PGRES_TUPLES_OK)
    }

    /// Runs a statement that answers no rows (`LISTEN "channel"`).
    func execute(_ statement: String) throws(PostgresError) {
        try check(PQexec(connection, statement), expecting: PGRES_COMMAND_OK).close()
    }

    /// `name` quoted as an identifier, as the server's encoding wants.
    func identifier(_ name: String) throws(PostgresError) -> String {
        let bytes = Array(name.utf8)
        guard
            let quoted = bytes.withUnsafeBufferPointer({
                PQescapeIdentifier(connection, $0.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, $0.count)
            })
        else { throw PostgresError(description: Self.message(PQerrorMessage(connection))) }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// The channels notified since the last call, waiting up to `timeout` for the first;
    /// throws where the connection broke.
    func notifications(waitingUpTo timeout: Duration) throws(PostgresError) -> [String] {
        var channels = try drain()
        guard channels.isEmpty else { return channels }
        var watched = pollfd(fd: PQsocket(connection), events: Int16(POLLIN), revents: 0)
        let (seconds, attoseconds) = timeout.components
        let milliseconds = max(0, min(Int64(Int32.max), seconds * 1_000 + attoseconds / 1_000_000_000_000_000))
        let ready = poll(&watched, 1, Int32(milliseconds))
        guard ready > 0 else { return [] }
        channels = try drain()
        return channels
    }

    /// Reads what the socket holds and takes the notifications it brought.
    private func drain() throws(PostgresError) -> [String] {
        guard PQconsumeInput(connection) == 1 else { throw PostgresError(description: Self.message(PQerrorMessage(connection))) }
        var channels: [String] = []
        while let notification = PQnotifies(connection) {
            channels.append(String(cString: notification.pointee.relname))
            PQfreemem(notification)
        }
        return channels
    }

    private func check(_ result: OpaquePointer?, expecting status: ExecStatusType) throws(PostgresError) -> PostgresRows {
        guard let result else { throw PostgresError(description: Self.message(PQerrorMessage(connection))) }
        guard PQresultStatus(result) == status else {
            let message = Self.message(PQresultErrorMessage(result))
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            PQclear(result)
            throw PostgresError(description: message.isEmpty ? Self.message(PQerrorMessage(connection)) : message, state: state)
        }
        return PostgresRows(result)
    }

    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "" }
        return String(cString: text).trimmingSuffix { $0 == "\n" || $0 == " " }
    }

    private static func withCStrings<T>(_ values: [String?], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> T) -> T {
        let copies: [UnsafeMutablePointer<CChar>?] = values.map { $0.map { strdup($0) } }
        defer { for copy in copies { free(copy) } }
        return copies.map { UnsafePointer($0) }.withUnsafeBufferPointer(body)
    }
}

/// A query's result: its rows' values as text (libpq's text format), with each column's name
/// and type.
final class PostgresRows {
    fileprivate let result: OpaquePointer
    private var closed = false

    fileprivate init(_ result: OpaquePointer) { self.result = result }

    deinit { close() }

    func close() {
        guard !closed else { return }
        closed = true
        PQclear(result)
    }

    var count: Int { Int(PQntuples(result)) }
    var columns: Int { Int(PQnfields(result)) }
    func name(_ column: Int) -> String { String(cString: PQfname(result, Int32(column))) }
    /// The column's type, by its oid (`pg_type`).
    func type(_ column: Int) -> UInt32 { PQftype(result, Int32(column)) }

    /// The value's text, nil where it is NULL; valid while the result is.
    func value(_ row: Int, _ column: Int) -> UnsafeBufferPointer<UInt8>? {
        guard PQgetisnull(result, Int32(row), Int32(column)) == 0, let text = PQgetvalue(result, Int32(row), Int32(column)) else { return nil }
        return UnsafeBufferPointer(
            start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: Int(PQgetlength(result, Int32(row), Int32(column))))
    }
}

extension String {
    fileprivate func trimmingSuffix(while drop: (Character) -> Bool) -> String {
        var text = Substring(self)
        while let last = text.last, drop(last) { text = text.dropLast() }
        return String(text)
    }
}
