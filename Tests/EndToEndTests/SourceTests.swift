import ByteJSON
import Foundation
import LiveCollections
import TestSupport
import Testing

/// Sessions fed by ordered queries on a real PostgreSQL 15 that each test starts (initdb and
/// pg_ctl in a temporary directory): the rows a table change leaves, committed as the delta from
/// the last version, to every subscriber; writes over HTTP refused; a database that goes and
/// comes back; bad sources and bad requests named.
@Suite(.serialized) struct SourceTests {
    /// A PostgreSQL with a players table whose every statement notifies `players`, and a
    /// sources file.
    struct Database {
        let postgres: PostgresProcess
        let file: URL

        /// - Parameter trigger: whether the table notifies (else `livedelta sources triggers`
        ///   says how).
        init(sources: String = SourceTests.sources, trigger: Bool = true) throws {
            postgres = try PostgresProcess()
            try postgres.sql(
                """
                CREATE TABLE players (id int PRIMARY KEY, league text NOT NULL, name text NOT NULL, score int NOT NULL);
                INSERT INTO players SELECT g, CASE WHEN g % 2 = 0 THEN 'gold' ELSE 'silver' END, 'p' || g, g * 10
                  FROM generate_series(1, 20) g;
                """)
            if trigger {
                try postgres.sql(
                    """
                    CREATE FUNCTION players_changed() RETURNS trigger LANGUAGE plpgsql AS $$
                      BEGIN PERFORM pg_notify('players', ''); RETURN NULL; END $$;
                    CREATE TRIGGER players_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON players
                      FOR EACH STATEMENT EXECUTE FUNCTION players_changed();
                    """)
            }
            file = postgres.directory.appendingPathComponent("sources.json")
            try Data(sources.utf8).write(to: file)
        }

        func server(_ extra: [String] = []) throws -> ServerProcess {
            try ServerProcess(arguments: ["--sources", file.path, "--postgres", postgres.conninfo] + extra)
        }

        /// The leaderboard of `league` as the database has it now.
        func selected(_ league: String) throws -> JSONValue {
            let text = try postgres.sql(
                """
                SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'score', score) ORDER BY score DESC, id), '[]')
                FROM players WHERE league = '\(league)'
                """)
            return try JSONValue(parsing: text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    static let sources = """
        {"sources": {
          "leaderboard": {"query": "SELECT id, name, score FROM players WHERE league = $1 ORDER BY score DESC, id", "key": "id",
                          "listen": ["players"], "debounceMilliseconds": 20,
                          "parameters": [{"name": "league", "pattern": "[a-z]{1,20}"}]},
          "byName": {"query": "SELECT name, score FROM players WHERE league = 'gold' ORDER BY score DESC", "key": "name", "listen": ["players"]},
          "byLeague": {"query": "SELECT id, league, name, score FROM players ORDER BY league, score DESC, id", "key": "id",
                       "section": "league", "listen": ["players"]},
          "unordered": {"query": "SELECT id, league FROM players ORDER BY id", "key": "id", "section": "league", "listen": ["players"]},
          "mine": {"query": "SELECT id, name FROM players WHERE league = $1 ORDER BY id", "key": "id", "listen": ["players"],
                   "parameters": [{"tenant": true}]}
        }}
        """

    static func create(_ connection: HTTPConnection, _ id: String, source: String, params: String = "{}") throws -> Reply {
        try connection.request("PUT", "/sessions/\(id)", json: #"{"source": "\#(source)", "params": \#(params)}"#)
    }

    /// Waits until the session holds `expected` (the source's rows now); its version then.
    static func settles(_ connection: HTTPConnection, _ id: String, at expected: JSONValue) throws -> Int? {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let shown = try connection.request("GET", "/sessions/\(id)")
            if shown.json["items"] == expected { return shown.json["version"]?.int }
            usleep(10_000)
        }
        return nil
    }

    @Test func aRowThatMovesIsOneMoveToEverySubscriber() throws {
        let database = try Database()
        let server = try database.server()
        let connection = try server.connection()
        let created = try Self.create(connection, "gold", source: "leaderboard", params: #"{"league": "gold"}"#)
        #expect(created.status == 201 && created.json["version"]?.int == 0 && created.json["count"]?.int == 10)
        #expect(try connection.request("GET", "/sessions/gold").json["items"] == (try database.selected("gold")))

        let stream = try EventStreamClient(port: server.port, path: "/sessions/gold/events?format=batch")
        #expect(try stream.next()?.event == "reset")
        // p4 (40 points, ninth of ten) to the top.
        try database.postgres.sql("UPDATE players SET score = 1000 WHERE id = 4")
        let event = try #require(try stream.next())
        #expect(event.event == "delta")
        let data = try JSONValue(parsing: event.data)
        #expect(data["version"]?.int == 1)
        let delta = try indexDelta(data["delta"])
        #expect(delta.deletions.isEmpty && delta.insertions.isEmpty)
        #expect(delta.moves == [IndexPair(source: 8, target: 0)], "one move: \(delta)")
        #expect(delta.reloads.count == 1, "its score changed: \(delta)")
        #expect(try connection.request("GET", "/sessions/gold").json["items"] == (try database.selected("gold")))

        // Statements of every kind, some in one transaction, one rolled back: the session ends
        // as the query reads, and a statement that changes no row commits nothing.
        try database.postgres.sql("INSERT INTO players VALUES (100, 'gold', 'new', 55), (101, 'silver', 'other', 1)")
        try database.postgres.sql("BEGIN; DELETE FROM players WHERE id = 6; UPDATE players SET score = score + 1 WHERE id = 8; COMMIT")
        try database.postgres.sql("BEGIN; DELETE FROM players WHERE league = 'gold'; ROLLBACK")
        try database.postgres.sql("UPDATE players SET name = 'renamed' WHERE id = 10")
        let version = try #require(try Self.settles(connection, "gold", at: try database.selected("gold")))
        try database.postgres.sql("UPDATE players SET score = score WHERE id = 2")
        try database.postgres.sql("SELECT pg_notify('players', '')")
        // A change after those: once it shows, the ones before it committed nothing.
        try database.postgres.sql("UPDATE players SET score = 2000 WHERE id = 12")
        let last = try #require(try Self.settles(connection, "gold", at: try database.selected("gold")))
        #expect(last == version + 1)
    }

    /// A section column: the rows that share its value, one after another, are a section. A
    /// row whose section changes moves across sections in one delta; a query that does not
    /// order by the section column is refused, saying so.
    @Test func aSectionColumnMakesSectionsAndARowMayCrossThem() throws {
        let database = try Database()
        let server = try database.server()
        let connection = try server.connection()
        func expected() throws -> JSONValue {
            let text = try database.postgres.sql(
                """
                SELECT json_agg(json_build_object('id', league, 'items', items) ORDER BY league) FROM (
                  SELECT league, json_agg(json_build_object('id', id, 'league', league, 'name', name, 'score', score) ORDER BY score DESC, id) AS items
                  FROM players GROUP BY league) s
                """)
            return try JSONValue(parsing: text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(try Self.create(connection, "leagues", source: "byLeague").status == 201)
        #expect(try connection.request("GET", "/sessions/leagues").json["sections"] == (try expected()))
        let stream = try EventStreamClient(port: server.port, path: "/sessions/leagues/events?format=sequential")
        #expect(try stream.next()?.event == "reset")
        try database.postgres.sql("UPDATE players SET league = 'silver' WHERE id = 4")
        let event = try #require(try stream.next())
        let version = try JSONValue(parsing: event.data)["version"]?.int
        #expect(event.event == "delta" && version == 1, "\(event)")
        let deadline = Date().addingTimeInterval(20)
        while try connection.request("GET", "/sessions/leagues").json["sections"] != (try expected()), Date() < deadline { usleep(10_000) }
        #expect(try connection.request("GET", "/sessions/leagues").json["sections"] == (try expected()))

        let refused = try Self.create(connection, "mixed", source: "unordered")
        #expect(refused.status == 409 && refused.json["error"]?["code"]?.stringValue == "source_result_refused")
        #expect(refused.json["error"]?["message"]?.stringValue?.contains("ORDER BY league first") == true, "\(refused.json)")
    }

    @Test func writesOverHTTPAreRefusedAndBadRequestsNamed() throws {
        let database = try Database()
        let server = try database.server()
        let connection = try server.connection()
        #expect(try Self.create(connection, "gold", source: "leaderboard", params: #"{"league": "gold"}"#).status == 201)
        for (method, path, body) in [
            ("POST", "/sessions/gold/update", #"{"items": []}"#), ("POST", "/sessions/gold/append", #"{"items": [{"id": 99}]}"#),
            ("POST", "/sessions/gold/changes", #"{"operations": [{"op": "remove", "id": 2}]}"#),
        ] {
            let refused = try connection.request(method, path, json: body)
            #expect(refused.status == 409 && refused.json["error"]?["code"]?.stringValue == "source_fed", "\(path)")
            #expect(refused.json["error"]?["source"]?.stringValue == "leaderboard")
        }
        // A body that is not JSON is refused for that first, as everywhere.
        let malformed = try connection.request("POST", "/sessions/gold/update", json: #"{"items": ["#)
        #expect(malformed.status == 400 && malformed.json["error"]?["code"]?.stringValue == "malformed_json")
        // A dry run changes nothing: allowed.
        #expect(try connection.request("POST", "/sessions/gold/delta", json: #"{"items": []}"#).status == 200)

        let cases: [(String, Int, String, String)] = [
            (#"{"source": "nope"}"#, 422, "unknown_source", "nope"),
            (#"{"source": "leaderboard", "params": {"league": "GOLD"}}"#, 400, "invalid_parameter", "params.league"),
            (#"{"source": "leaderboard"}"#, 400, "invalid_parameter", "params.league"),
            (#"{"source": "leaderboard", "params": {"league": "gold", "x": "1"}}"#, 400, "invalid_parameter", "params.x"),
            (#"{"source": "leaderboard", "params": {"league": 1}}"#, 422, "invalid_shape", "/params/league"),
            (#"{"items": [], "params": {}}"#, 422, "invalid_shape", "/params"),
            (#"{"items": [], "source": "leaderboard"}"#, 422, "invalid_shape", ""),
            (#"{"source": "leaderboard", "params": {"league": "gold"}, "options": {"idKey": "name"}}"#, 422, "invalid_option", "/options"),
            (#"{"source": "mine"}"#, 400, "invalid_parameter", "tenant"),
        ]
        for (body, status, code, named) in cases {
            let refused = try connection.request("PUT", "/sessions/other", json: body)
            #expect(refused.status == status && refused.json["error"]?["code"]?.stringValue == code, "\(body): \(refused.json)")
            let error = refused.json["error"]
            let said = [
                error?["parameter"]?.stringValue, error?["pointer"]?.stringValue, error?["source"]?.stringValue, error?["message"]?.stringValue,
            ]
            #expect(said.contains { $0?.contains(named) ?? false } || named.isEmpty, "\(body) names \(named): \(refused.json)")
        }
        // Made a session of its own (PUT with items): writes are its own again, and the
        // source's next result (once another of its sessions shows it) is not committed to it.
        #expect(try connection.request("PUT", "/sessions/gold", json: #"{"items": [{"id": 1}]}"#).status == 200)
        #expect(try connection.request("POST", "/sessions/gold/append", json: #"{"items": [{"id": 2}]}"#).status == 200)
        #expect(try Self.create(connection, "watch", source: "leaderboard", params: #"{"league": "gold"}"#).status == 201)
        try database.postgres.sql("UPDATE players SET score = 0 WHERE id = 2")
        #expect(try Self.settles(connection, "watch", at: try database.selected("gold")) == 1)
        #expect(try connection.request("GET", "/sessions/gold").json["version"]?.int == 1, "no longer fed")
    }

    /// The token's tenant is the parameter: two tenants' sessions of one source hold their own
    /// rows, whatever the request says.
    @Test func aTenantsSessionHoldsItsOwnRows() throws {
        let database = try Database()
        let secret = database.postgres.directory.appendingPathComponent("secret")
        try Data(String(repeating: "k", count: 40).utf8).write(to: secret)
        let server = try database.server(["--auth", "jwt", "--jwt-secret-file", secret.path])
        let connection = try server.connection()
        let scope = "sessions:write sessions:read sessions:subscribe"
        for tenant in ["gold", "silver"] {
            let token = try hs256Token(secret: secret, tenant: tenant, scope: scope)
            let headers = [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")]
            let created = try connection.request("PUT", "/sessions/mine", json: #"{"source": "mine"}"#, headers: headers)
            #expect(created.status == 201)
            let shown = try connection.request("GET", "/sessions/mine", headers: [("Authorization", "Bearer \(token)")])
            let ids = shown.json["items"]?.array?.compactMap { $0["id"]?.int } ?? []
            #expect(ids == Array(stride(from: tenant == "gold" ? 2 : 1, through: 20, by: 2)), "\(tenant): \(ids)")
        }
    }

    /// `livedelta sources triggers` prints the SQL that makes the table notify its sources'
    /// channels: installed, a change reaches the session.
    @Test func theTriggersCommandsSQLMakesTheTableNotify() throws {
        let database = try Database(trigger: false)
        let (status, sql) = try runProgram([
            ServerProcess.binary.path, "sources", "triggers", database.file.path, "--postgres", database.postgres.conninfo,
        ])
        #expect(status == 0, "\(sql)")
        #expect(sql.contains(#"ON "public"."players""#) && sql.contains("pg_notify('players', '')"), "\(sql)")
        try database.postgres.sql(sql)
        let server = try database.server()
        let connection = try server.connection()
        #expect(try Self.create(connection, "gold", source: "leaderboard", params: #"{"league": "gold"}"#).status == 201)
        try database.postgres.sql("DELETE FROM players WHERE id = 10")
        #expect(try Self.settles(connection, "gold", at: try database.selected("gold")) == 1)
        let broken = Data(#"{"sources": {"broken": {"query": "SELECT id FROM nowhere", "key": "id", "listen": ["x"]}}}"#.utf8)
        try broken.write(to: database.file)
        let (refused, said) = try runProgram([
            ServerProcess.binary.path, "sources", "triggers", database.file.path, "--postgres", database.postgres.conninfo,
        ])
        #expect(refused == 1 && said.contains("source broken") && said.contains("nowhere"), "\(said)")
    }

    @Test func aQueryPostgreSQLRefusesStopsStartUpNamingTheSource() throws {
        let database = try Database(
            sources: #"{"sources": {"broken": {"query": "SELECT id FROM nowhere ORDER BY id", "key": "id", "listen": ["x"]}}}"#)
        // Run to its end, so that all it printed is read.
        let serve = [ServerProcess.binary.path, "serve", "--port", "0", "--host", "127.0.0.1", "--sources", database.file.path]
        let (status, said) = try runProgram(serve + ["--postgres", database.postgres.conninfo])
        #expect(status == 1 && said.contains("source broken") && said.contains("nowhere") && said.contains("does not exist"), "\(said)")
        let (alone, saidAlone) = try runProgram(serve)
        #expect(alone != 0 && saidAlone.contains("--sources and --postgres go together"), "\(saidAlone)")
    }

    /// A burst of a thousand notifications, each its own transaction, is read at most once per
    /// debounce (here 200 ms) it spans, and commits nothing (the rows did not change).
    @Test func aBurstOfNotificationsIsOneEvaluationADebounce() throws {
        let database = try Database(
            sources:
                #"{"sources": {"slow": {"query": "SELECT id, score FROM players ORDER BY id", "key": "id", "listen": ["players"], "debounceMilliseconds": 200}}}"#
        )
        try database.postgres.sql(
            """
            CREATE PROCEDURE burst() LANGUAGE plpgsql AS $$
              BEGIN FOR i IN 1..1000 LOOP PERFORM pg_notify('players', i::text); COMMIT; END LOOP; END $$;
            """)
        let server = try database.server()
        let connection = try server.connection()
        #expect(try Self.create(connection, "all", source: "slow").status == 201)
        let started = Date()
        try database.postgres.sql("CALL burst()")
        // The last notification's evaluation, a debounce after it.
        var evaluations = 0
        let deadline = Date().addingTimeInterval(20)
        repeat {
            usleep(50_000)
            let metrics = String(decoding: try connection.request("GET", "/metrics").body, as: UTF8.self)
            let line = metrics.split(separator: "\n").first { $0.hasPrefix("livedelta_source_evaluations_total") && $0.contains("unchanged") }
            evaluations = line.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
        } while evaluations == 0 && Date() < deadline
        usleep(400_000)
        let metrics = String(decoding: try connection.request("GET", "/metrics").body, as: UTF8.self)
        let lines = metrics.split(separator: "\n").filter { $0.hasPrefix("livedelta_source_evaluations_total") }
        let total = lines.compactMap { Int($0.split(separator: " ").last ?? "") }.reduce(0, +)
        let spanned = Date().timeIntervalSince(started)
        #expect(total >= 1 && Double(total) <= spanned / 0.2 + 1, "\(total) evaluations in \(spanned) s: \(lines)")
        #expect(lines.allSatisfy { $0.contains("unchanged") }, "\(lines)")
        #expect(try connection.request("GET", "/sessions/all").json["version"]?.int == 0)
    }

    /// PostgreSQL stopped: the sessions keep their versions, `/ready` says so; started again,
    /// a change made while no one listened is read (every session is evaluated again).
    @Test func postgreSQLGoneAndBackLosesNoChange() throws {
        let database = try Database()
        let server = try database.server()
        let connection = try server.connection()
        #expect(try Self.create(connection, "gold", source: "leaderboard", params: #"{"league": "gold"}"#).status == 201)
        database.postgres.stop()
        #expect(try Self.ready(connection, is: 503))
        #expect(try connection.request("GET", "/sessions/gold").json["version"]?.int == 0)
        #expect(server.logShows("PostgreSQL lost"))
        try database.postgres.start()
        // Made before the server listens again: no notification reaches it.
        try database.postgres.sql("UPDATE players SET score = 5000 WHERE id = 20")
        #expect(try Self.settles(connection, "gold", at: try database.selected("gold")) == 1)
        #expect(try Self.ready(connection, is: 200))
    }

    /// With no trigger on the table, `refreshSeconds` is the safety net: a change reaches the
    /// session by the next refresh.
    @Test func theRefreshReadsAChangeNoOneNotified() throws {
        let database = try Database(
            sources:
                #"{"sources": {"polled": {"query": "SELECT id, score FROM players WHERE league = 'gold' ORDER BY score DESC, id", "key": "id", "listen": ["nobody"], "refreshSeconds": 1}}}"#,
            trigger: false)
        let server = try database.server()
        let connection = try server.connection()
        #expect(try Self.create(connection, "polled", source: "polled").status == 201)
        try database.postgres.sql("UPDATE players SET score = 1000 WHERE id = 2")
        let expected = try JSONValue(
            parsing: try database.postgres.sql(
                "SELECT json_agg(json_build_object('id', id, 'score', score) ORDER BY score DESC, id) FROM players WHERE league = 'gold'"
            ).trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(try Self.settles(connection, "polled", at: expected) == 1)
    }

    /// A result that makes no collection (two rows with one key) commits nothing and says so:
    /// in the log, on the session (`GET`'s `source.problem`) and to its subscribers (a `source`
    /// event); once the rows are fixed, the next version is theirs, and the problem is gone.
    @Test func aResultWithARepeatedKeyKeepsTheVersion() throws {
        let database = try Database()
        let server = try database.server()
        let connection = try server.connection()
        #expect(try Self.create(connection, "names", source: "byName").status == 201)
        #expect(try connection.request("GET", "/sessions/names").json["source"] == (try JSONValue(parsing: #"{"name": "byName", "problem": null}"#)))
        let stream = try EventStreamClient(port: server.port, path: "/sessions/names/events")
        #expect(try stream.next()?.event == "reset")
        try database.postgres.sql("UPDATE players SET name = 'twin' WHERE id IN (2, 4)")
        #expect(server.logShows("source result not committed", "session=names"))
        let told = try #require(try stream.next())
        #expect(told.event == "source" && told.id == nil)
        let problem = try JSONValue(parsing: told.data)
        #expect(problem["name"]?.stringValue == "byName" && problem["problem"]?["code"]?.stringValue == "source_result_refused", "\(problem)")
        #expect(problem["problem"]?["message"]?.stringValue?.contains("twin") == true, "\(problem)")
        let shown = try connection.request("GET", "/sessions/names").json
        #expect(shown["version"]?.int == 0 && shown["source"] == problem)

        try database.postgres.sql("UPDATE players SET name = 'single' WHERE id = 4")
        var events: [String: JSONValue] = [:]
        while events.count < 2, let event = try stream.next() { events[event.event] = try JSONValue(parsing: event.data) }
        #expect(events["delta"]?["version"]?.int == 1)
        #expect(events["source"] == (try JSONValue(parsing: #"{"name": "byName", "problem": null}"#)))
        #expect(try connection.request("GET", "/sessions/names").json["source"]?["problem"] == .null)
        let refused = try Self.create(connection, "again", source: "byName")
        #expect(refused.status == 201)
        try database.postgres.sql("UPDATE players SET name = 'twin' WHERE id = 6")
        let twice = try Self.create(connection, "twice", source: "byName")
        #expect(twice.status == 409 && twice.json["error"]?["code"]?.stringValue == "source_result_refused", "\(twice.json)")
        #expect(twice.json["error"]?["message"]?.stringValue?.contains("have one name, twin") == true)
    }

    /// Random inserts, updates, deletes and reorders from four concurrent writers, some of
    /// their transactions rolled back: every version a subscriber is sent is the table as a
    /// `SELECT` read it after one of the commits, in the order they committed, and replays (by
    /// UIKit's batch rules) from the version before to its rows with the fewest moves; the
    /// last equals the table.
    @Test func randomConcurrentTransactionsReplayToTheTable() throws {
        let database = try Database()
        try database.postgres.sql("CREATE SEQUENCE commits")
        let server = try database.server()
        let connection = try server.connection()
        #expect(try Self.create(connection, "gold", source: "leaderboard", params: #"{"league": "gold"}"#).status == 201)
        let stream = try EventStreamClient(port: server.port, path: "/sessions/gold/events?format=batch")
        let reset = try #require(try stream.next())
        var shown = try JSONValue(parsing: reset.data)["items"]?.array ?? []
        // The table as of each commit: each transaction reads it before it commits, under a
        // lock that orders the writers' commits (taken first, so that none deadlocks).
        let committed = NSLock()
        nonisolated(unsafe) var states: [Int: JSONValue] = [0: .array(shown)]

        DispatchQueue.concurrentPerform(iterations: 4) { writer in
            var random = SeededGenerator(state: UInt64(writer + 1))
            for round in 0..<20 {
                var statements: [String] = []
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let id = Int.random(in: 1...80, using: &random) * 2  // gold ids are even
                    let score = Int.random(in: 0...300, using: &random)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: statements.append("INSERT INTO players VALUES (\(id), 'gold', 'w\(writer)', \(score)) ON CONFLICT (id) DO NOTHING")
                    case 1: statements.append("DELETE FROM players WHERE id = \(id)")
                    case 2: statements.append("UPDATE players SET score = \(score) WHERE id = \(id)")
                    default: statements.append("UPDATE players SET name = 'r\(round)' WHERE id = \(id)")
                    }
                }
                let end = Int.random(in: 0..<5, using: &random) == 0 ? "ROLLBACK" : "COMMIT"
                let read = """
                    SELECT nextval('commits') || ' ' || coalesce(json_agg(json_build_object('id', id, 'name', name, 'score', score)
                      ORDER BY score DESC, id), '[]') FROM players WHERE league = 'gold'
                    """
                let output = try? database.postgres.sql(
                    "BEGIN; LOCK TABLE players IN SHARE ROW EXCLUSIVE MODE; \(statements.joined(separator: "; ")); \(read); \(end)")
                guard end == "COMMIT", let line = output?.split(separator: "\n").first(where: { $0.contains(" [") }),
                    let space = line.firstIndex(of: " "), let sequence = Int(line[..<space]),
                    let state = try? JSONValue(parsing: String(line[line.index(after: space)...]))
                else { continue }
                committed.withLock { states[sequence] = state }
            }
        }
        let history = states.sorted { $0.key < $1.key }.map(\.value)
        #expect(history.count > 40, "of 80 transactions, a fifth rolled back: \(history.count) states")
        var seen = 0
        let expected = try database.selected("gold")
        let last = try #require(try Self.settles(connection, "gold", at: expected))
        #expect(last >= 5, "the writers' transactions made \(last) versions")
        var version = try JSONValue(parsing: reset.data)["version"]?.int ?? 0
        while version < last {
            let event = try #require(try stream.next())
            guard event.event == "delta" else { continue }
            let data = try JSONValue(parsing: event.data)
            let rows = data["items"]?.array ?? []
            #expect(data["baseVersion"]?.int == version)
            let delta = try indexDelta(data["delta"])
            #expect(try delta.replay(old: shown, new: rows) == rows, "version \(data["version"]?.int ?? -1)")
            #expect(delta.moves.count == Self.fewestMoves(from: shown, to: rows), "version \(data["version"]?.int ?? -1): \(delta)")
            let found = history[seen...].firstIndex(of: .array(rows))
            #expect(found != nil, "version \(data["version"]?.int ?? -1) is the table as of a commit after the last version's")
            seen = found ?? seen
            shown = rows
            version = data["version"]?.int ?? version + 1
        }
        #expect(.array(shown) == expected)
    }

    /// Sessions of one source and the same parameters are evaluated by one query, however many
    /// there are: a notification that changes three sessions of two leagues runs two. (The
    /// query counts its runs in a sequence.)
    @Test func sessionsOfOneSourceAndParametersShareAQuery() throws {
        let database = try Database(
            sources: """
                {"sources": {"counted": {
                  "query": "SELECT id, name, score FROM players, (SELECT nextval('runs')) AS run WHERE league = $1 ORDER BY score DESC, id",
                  "key": "id", "listen": ["players"], "parameters": [{"name": "league", "pattern": "[a-z]+"}]}}}
                """)
        try database.postgres.sql("CREATE SEQUENCE runs")
        let server = try database.server()
        let connection = try server.connection()
        for (id, league) in [("one", "gold"), ("two", "gold"), ("three", "silver")] {
            #expect(try Self.create(connection, id, source: "counted", params: #"{"league": "\#(league)"}"#).status == 201)
        }
        let before = try database.postgres.sql("SELECT last_value FROM runs").trimmingCharacters(in: .whitespacesAndNewlines)
        try database.postgres.sql("UPDATE players SET score = score + 1000 WHERE id IN (2, 3)")
        for (id, league) in [("one", "gold"), ("two", "gold"), ("three", "silver")] {
            #expect(try Self.settles(connection, id, at: try database.selected(league)) == 1)
        }
        let after = try database.postgres.sql("SELECT last_value FROM runs").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Int(after)! - Int(before)! == 2, "runs \(before) to \(after)")
    }

    /// The fewest moves from `old` to `new` by id: the kept rows not on a longest run of them
    /// already in order.
    static func fewestMoves(from old: [JSONValue], to new: [JSONValue]) -> Int {
        var oldPlace: [Int: Int] = [:]
        for (index, row) in old.enumerated() { oldPlace[row["id"]?.int ?? -1] = index }
        let kept = new.compactMap { oldPlace[$0["id"]?.int ?? -1] }
        var tails: [Int] = []
        for place in kept {
            var low = 0
            var high = tails.count
            while low < high {
                let middle = (low + high) / 2
                if tails[middle] < place { low = middle + 1 } else { high = middle }
            }
            if low == tails.count { tails.append(place) } else { tails[low] = place }
        }
        return kept.count - tails.count
    }

    static func ready(_ connection: HTTPConnection, is status: Int) throws -> Bool {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if try connection.request("GET", "/ready").status == status { return true }
            usleep(10_000)
        }
        return false
    }
}
