#!/usr/bin/env bash
# Session benchmark: resident memory per byte of JSON held, and update throughput on one
# 10,000-item session where each update changes 1% (wrk on the same cores). Bounded.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; [ -n "${redis:-}" ] && kill "$redis" 2>/dev/null; rm -rf "$work"' EXIT
start() {
    .build/release/livedelta --host 127.0.0.1 --port 0 --log-level notice --max-sessions 2000 --max-session-items 200000 "$@" > "$work/log" 2>&1 &
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
kill "$server"; wait "$server" 2>/dev/null || true
echo "== writes by change: one 100,000-item session, memory store, then Redis"
start
python3 Benchmarks/sessions/load.py changes "$port" memory
kill "$server"; wait "$server" 2>/dev/null || true
redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$redis_port" --save "" --appendonly no --dir "$work" > /dev/null &
redis=$!
for _ in $(seq 100); do redis-cli -p "$redis_port" ping > /dev/null 2>&1 && break; sleep 0.05; done
start --session-store "redis://127.0.0.1:$redis_port"
python3 Benchmarks/sessions/load.py changes "$port" redis
