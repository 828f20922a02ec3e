#!/usr/bin/env bash
# Redis session store benchmark: updates to one 10,000-item session, 1% changed each time,
# against the memory store, Redis with sticky traffic (one replica), and Redis with two
# replicas taking turns. A redis-server of its own on a free loopback port, no persistence;
# wrk on the same cores. Prints figures, asserts nothing; bounded (10 s a run).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
redis_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" --daemonize no --loglevel warning &
pids+=($!)
for _ in $(seq 100); do redis-cli -p "$redis_port" ping > /dev/null 2>&1 && break; sleep 0.05; done
start() { # name, flags...: starts a server and sets port_<name>
    local name=$1; shift
    .build/release/livedelta --host 127.0.0.1 --port 0 --log-level notice "$@" > "$work/$name.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do grep -q "port=" "$work/$name.log" && break; sleep 0.05; done
    printf -v "port_$name" '%s' "$(grep -o 'port=[0-9]*' "$work/$name.log" | head -1 | cut -d= -f2)"
}
start memory
start one --session-store "redis://127.0.0.1:$redis_port"
start two --session-store "redis://127.0.0.1:$redis_port"
python3 Benchmarks/sessions/load.py bodies "$work"
run() { # port, connections
    BODY_A="$work/b.json" BODY_B="$work/a.json" wrk -t1 -c"$2" -d10s -s Benchmarks/sessions/alternate.lua --latency \
        "http://127.0.0.1:$1/sessions/busy/update" > "$work/wrk.$1" 2>&1
}
figures() { grep -E "Requests/sec|^ +(50|99)%|Non-2xx" "$1" | tr -s ' ' | paste -sd ' '; }
echo "== updates to one 10,000-item session, 1% changed each time ($(wc -c < "$work/a.json") bytes a request), 2 connections, 10 s"
for name in memory one; do
    port_var="port_$name"; port=${!port_var}
    curl -sf -X PUT "http://127.0.0.1:$port/sessions/busy" -H 'Content-Type: application/json' --data-binary @"$work/a.json" > /dev/null
    run "$port" 2
    label=$([ "$name" = memory ] && echo "memory store" || echo "Redis, sticky (one replica)")
    echo "$label: $(figures "$work/wrk.$port")"
done
# Two replicas taking turns: one connection to each, both updating the same session.
run "$port_one" 1 &
first=$!
run "$port_two" 1
wait "$first"
echo "Redis, two replicas, one connection each: $(figures "$work/wrk.$port_one") | $(figures "$work/wrk.$port_two")"
echo "   (the two rates add up; Non-2xx would be 412/503 answers)"
