#!/usr/bin/env bash
# Load benchmark: starts the release server on a free loopback port, runs wrk (on the same
# cores) against POST /diff with a 20-item and a 10,000-item body, prints requests/s and
# latency percentiles, and stops the server. Bounded: a few seconds per run.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 Benchmarks/load/bodies.py "$work"
# Request lines (info) off: they would measure the terminal, not the service.
.build/release/livedelta --host 127.0.0.1 --port 0 --log-level notice --log-format text > "$work/log" 2>&1 &
server=$!
for _ in $(seq 100); do grep -q "port=" "$work/log" && break; sleep 0.05; done
port=$(grep -o 'port=[0-9]*' "$work/log" | head -1 | cut -d= -f2)
url="http://127.0.0.1:$port/diff"
run() { # name, body file, connections, seconds
    echo "== $1: $(wc -c < "$2") bytes a request, $3 connections, $4 s"
    BODY="$2" wrk -t1 -c"$3" -d"$4"s -s Benchmarks/load/post.lua --latency "$url" | grep -E "Requests/sec|^ +(50|99)%"
}
run "small diff (20 items a side)" "$work/small.json" 32 10
run "10,000-item diff" "$work/large.json" 2 10
