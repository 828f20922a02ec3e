#!/usr/bin/env bash
# make demo-postgres: a throwaway PostgreSQL 15 (a cluster in a temporary folder, unix socket
# only) with a small leaderboard table, a source on it and its trigger, and the server on
# PORT (8080), whose live page shows the leaderboard while a writer changes a score every
# second. Ctrl-C stops all of it and removes the folder.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${PORT:-8080}
bin=/usr/lib/postgresql/15/bin
command -v curl >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl >/dev/null; }
swift build -c release --product livedelta --static-swift-stdlib --scratch-path .build-static
livedelta=.build-static/release/livedelta

dir=$(mktemp -d /tmp/livedelta-demo.XXXXXX)
chmod 755 "$dir"
# initdb refuses root: the server's tools run as postgres there.
as_server=()
if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; as_server=(runuser -u postgres --); fi
server_pid=
writer_pid=
stop() {
    [ -n "$writer_pid" ] && kill "$writer_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    "${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap stop EXIT
trap 'exit 0' INT TERM

"${as_server[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --no-sync >/dev/null
"${as_server[@]}" "$bin/pg_ctl" -D "$dir/data" -w -l "$dir/log" -o "-c listen_addresses='' -k $dir -c fsync=off" start >/dev/null
conninfo="host=$dir user=postgres dbname=postgres"
psql() { command psql -X -q -v ON_ERROR_STOP=1 -h "$dir" -U postgres "$@"; }
psql -c "CREATE TABLE players (id int PRIMARY KEY, league text NOT NULL, name text NOT NULL, score int NOT NULL);
         INSERT INTO players SELECT g, CASE WHEN g % 2 = 0 THEN 'gold' ELSE 'silver' END, 'player ' || g, g * 10
         FROM generate_series(1, 30) g;"
cat > "$dir/sources.json" <<'JSON'
{"sources": {"leaderboard": {
  "query": "SELECT id, name, score, name || ': ' || score || ' points' AS title FROM players WHERE league = $1 ORDER BY score DESC, id",
  "key": "id", "listen": ["players"], "debounceMilliseconds": 50,
  "parameters": [{"name": "league", "pattern": "[a-z]{1,20}"}]}}}
JSON
"$livedelta" sources triggers "$dir/sources.json" --postgres "$conninfo" | psql

"$livedelta" serve --port "$port" --sources "$dir/sources.json" --postgres "$conninfo" --log-level warning &
server_pid=$!
for _ in $(seq 100); do curl -sf "localhost:$port/health" >/dev/null 2>&1 && break; sleep 0.1; done
curl -sf -X PUT "localhost:$port/sessions/gold" -H 'Content-Type: application/json' \
    -d '{"source": "leaderboard", "params": {"league": "gold"}}' >/dev/null

# A writer: a random gold player's score, every second.
( while sleep 1; do
      psql -c "UPDATE players SET score = (random() * 400)::int WHERE id = 2 * (1 + (random() * 14)::int)" >/dev/null 2>&1 || exit 0
  done ) &
writer_pid=$!

cat <<TEXT

  The leaderboard, live:   http://localhost:$port/live/gold
  Its events:              curl -N localhost:$port/sessions/gold/events
  Change it yourself:      psql -h $dir -U postgres -c "UPDATE players SET score = 1000 WHERE id = 4"
  The sources file:        $dir/sources.json

  A writer changes a score every second. Ctrl-C stops everything and removes $dir.
TEXT
wait "$server_pid"
