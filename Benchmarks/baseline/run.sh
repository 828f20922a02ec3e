#!/usr/bin/env bash
# Side by side: a raw libmicrohttpd server answering a fixed reply (fixed-reply.c, built here)
# and LiveDelta's /diff, under the same wrk load, taking turns for several rounds, for the
# 20-item body and a 30-byte one. Prints each round and the ratio of medians (LiveDelta's
# requests/s over the raw server's). wrk runs on the same two cores. Prints, asserts nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
cc -O2 -o "$work/fixed-reply" Benchmarks/baseline/fixed-reply.c -lmicrohttpd
threads=$(nproc)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
raw_port=$(free_port)
"$work/fixed-reply" "$raw_port" "$threads" > "$work/raw.log" 2>&1 &
pids+=($!)
.build/release/livedelta --host 127.0.0.1 --port 0 --log-level notice --log-format text > "$work/livedelta.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do grep -q "port=" "$work/livedelta.log" && grep -q "port=" "$work/raw.log" && break; sleep 0.05; done
live_port=$(grep -o 'port=[0-9]*' "$work/livedelta.log" | head -1 | cut -d= -f2)
python3 Benchmarks/load/bodies.py "$work"
printf '{"old":[1,2,3],"new":[3,2,1]}' > "$work/tiny.json"
rounds=${ROUNDS:-3}
seconds=${SECONDS_EACH:-8}
rate() { # port, body
    BODY="$2" wrk -t1 -c32 -d"${seconds}s" -s Benchmarks/load/post.lua "http://127.0.0.1:$1/diff" | awk '/Requests\/sec/ {print $2}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for body in small tiny; do
    file="$work/$body.json"
    echo "== $body body ($(wc -c < "$file") bytes), wrk -t1 -c32, ${seconds} s a run, $rounds rounds, taking turns"
    : > "$work/raw.rates"; : > "$work/live.rates"
    for round in $(seq "$rounds"); do
        raw=$(rate "$raw_port" "$file"); live=$(rate "$live_port" "$file")
        echo "$raw" >> "$work/raw.rates"; echo "$live" >> "$work/live.rates"
        echo "  round $round: raw libmicrohttpd $raw requests/s, LiveDelta $live requests/s"
    done
    raw=$(median < "$work/raw.rates"); live=$(median < "$work/live.rates")
    echo "  medians: raw $raw, LiveDelta $live: LiveDelta at $(python3 -c "print(f'{100 * $live / $raw:.0f}%')") of raw"
done
