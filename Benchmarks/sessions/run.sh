#!/usr/bin/env bash
# Session benchmark: resident memory per byte of JSON held, and update throughput on one
# 10,000-item session where each update changes 1% (wrk on the same cores). Bounded.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
start() {
    .build/release/livedelta --host 127.0.0.1 --port 0 --log-level notice --max-sessions 2000 > "$work/log" 2>&1 &
    server=$!
    for _ in $(seq 100); do grep -q "port=" "$work/log" && break; sleep 0.05; done
    port=$(grep -o 'port=[0-9]*' "$work/log" | head -1 | cut -d= -f2)
}
start
python3 Benchmarks/sessions/load.py memory "$port" "$server"
kill "$server"; wait "$server" 2>/dev/null || true
start
python3 Benchmarks/sessions/load.py bodies "$work"
curl -sf -X PUT "http://127.0.0.1:$port/sessions/busy" -H 'Content-Type: application/json' --data-binary @"$work/a.json" > /dev/null
echo "== updates to one 10,000-item session, 1% changed each time ($(wc -c < "$work/a.json") bytes a request)"
BODY_A="$work/b.json" BODY_B="$work/a.json" wrk -t1 -c2 -d10s -s Benchmarks/sessions/alternate.lua --latency \
    "http://127.0.0.1:$port/sessions/busy/update" | grep -E "Requests/sec|^ +(50|99)%"
