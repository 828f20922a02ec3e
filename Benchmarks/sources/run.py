"""make bench-sources: sessions fed by PostgreSQL queries, against the release binary and a
throwaway PostgreSQL 15 (initdb and pg_ctl in a temporary folder, unix socket only).

Prints: a 10,000-row source followed by 1,000 subscribers, and one UPDATE that moves a row
(each round a row to the top, the statement sent to one psql session): from the moment it is
sent to the moment the last subscriber has read the version, p50 and p99 over 30 rounds (the
50 ms debounce included), with the delta one such UPDATE gives; 1,000 NOTIFYs over about a second, each
its own transaction, and the evaluations they caused against the debounce windows they span; 100
sources on one server, each changed once a second for 10 s, and the CPU the server and
PostgreSQL spent a second. Figures only; nothing is asserted.
"""
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/livedelta"
subscribers_binary = os.path.join(os.path.dirname(binary), "LiveSubscribers")
sys.stdout.reconfigure(line_buffering=True)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
BIN = "/usr/lib/postgresql/15/bin"
TICKS = os.sysconf("SC_CLK_TCK")
ROWS, SUBSCRIBERS, ROUNDS = 10_000, 1_000, 30


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    """A cluster in a temporary folder; its tools run as postgres where this runs as root."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="bench-sources-")
        os.chmod(self.dir, 0o755)
        self.prefix = []
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres")
            self.prefix = ["runuser", "-u", "postgres", "--"]
        data = os.path.join(self.dir, "data")
        subprocess.run(self.prefix + [f"{BIN}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(self.prefix + [f"{BIN}/pg_ctl", "-D", data, "-w", "-l", os.path.join(self.dir, "log"), "-o",
                                      f"-c listen_addresses='' -k {self.dir} -c fsync=off", "start"], check=True, stdout=subprocess.DEVNULL)
        self.data = data
        self.conninfo = f"host={self.dir} user=postgres dbname=postgres"

    def psql(self, sql, stdin=None):
        return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.dir, "-U", "postgres"]
                              + (["-c", sql] if sql else []), input=stdin, check=True, capture_output=True, text=True).stdout

    def cpu_seconds(self):
        """The postmaster's CPU, its reaped backends' and its live children's."""
        with open(os.path.join(self.data, "postmaster.pid")) as pid_file:
            postmaster = int(pid_file.readline())
        total = 0.0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid, parent = int(entry), int(fields[1])
            if pid == postmaster:
                total += sum(int(value) for value in fields[11:15]) / TICKS
            elif parent == postmaster:
                total += (int(fields[11]) + int(fields[12])) / TICKS
        return total

    def stop(self):
        subprocess.run(self.prefix + [f"{BIN}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"], stdout=subprocess.DEVNULL)
        shutil.rmtree(self.dir, ignore_errors=True)


def server(postgres, sources):
    path = os.path.join(postgres.dir, "sources.json")
    with open(path, "w") as file:
        json.dump({"sources": sources}, file)
    triggers = subprocess.run([binary, "sources", "triggers", path, "--postgres", postgres.conninfo], check=True, capture_output=True, text=True)
    postgres.psql(None, stdin=triggers.stdout)
    port = free_port()
    process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--max-subscribers", "5000",
                                "--max-subscribers-per-session", "5000", "--max-subscribers-per-tenant", "5000",
                                "--max-connections-per-client", "5000", "--stream-opens-per-second", "0",
                                "--sources", path, "--postgres", postgres.conninfo], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=1).read()
            return process, port
        except OSError:
            time.sleep(0.05)
    raise SystemExit("the server did not start")


def put(port, session, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/sessions/{session}", data=json.dumps(body).encode(), method="PUT",
                                     headers={"Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request).read())


def evaluations(port):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
    return sum(int(float(line.split()[-1])) for line in text.splitlines() if line.startswith("livedelta_source_evaluations_total"))


def first_delta(port, session, trigger):
    """The first delta event a new subscriber reads after `trigger` runs (the stream is chunked)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(f"GET /sessions/{session}/events?format=batch&rows=changed HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        raw = b""
        while b"\r\n\r\n" not in raw:
            raw += s.recv(1 << 20)
        raw = raw.partition(b"\r\n\r\n")[2]
        body = b""
        triggered = False
        while True:
            # Whole chunks into the body: a size line, the bytes, CRLF.
            while b"\r\n" in raw:
                size_line, _, rest = raw.partition(b"\r\n")
                size = int(size_line.split(b";")[0], 16)
                if len(rest) < size + 2:
                    break
                body += rest[:size]
                raw = rest[size + 2:]
            text = body.replace(b"\r\n", b"\n")
            if not triggered and b"event: reset" in text:
                trigger()
                triggered = True
            for block in text.split(b"\n\n")[:-1]:
                if b"event: delta" in block:
                    line = [part for part in block.split(b"\n") if part.startswith(b"data: ")][0]
                    return json.loads(line[6:])["delta"]
            raw += s.recv(1 << 20)


def percentile(values, fraction):
    values = sorted(values)
    return values[max(0, min(len(values) - 1, int(round(fraction * len(values))) - 1))]


def one_source(postgres):
    postgres.psql(f"CREATE TABLE scores (id int PRIMARY KEY, name text NOT NULL, score int NOT NULL);"
                  f"INSERT INTO scores SELECT g, 'player ' || g, g * 10 FROM generate_series(1, {ROWS}) g;")
    process, port = server(postgres, {"board": {"query": "SELECT id, name, score FROM scores ORDER BY score DESC, id", "key": "id",
                                                "listen": ["scores"], "debounceMilliseconds": 50}})
    try:
        version = put(port, "board", {"source": "board"})["version"]
        # Each round moves one row to the top: a score above every other, one higher each round.
        # The statement goes to one psql session through a FIFO, so that no round pays for
        # starting psql and connecting.
        fifo = os.path.join(postgres.dir, "statements")
        os.mkfifo(fifo)
        session = subprocess.Popen(["psql", "-X", "-q", "-h", postgres.dir, "-U", "postgres", "-f", fifo], stdout=subprocess.DEVNULL)
        keep_open = open(fifo, "w")
        command = f"echo \"UPDATE scores SET score = 1000000 + $ROUND WHERE id = ($ROUND * 37) % {ROWS} + 1;\" > {fifo}"
        client = subprocess.Popen([subscribers_binary, str(port), "board", str(SUBSCRIBERS), str(ROUNDS), str(version), command],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = client.stdout.readline().split()
        client.stdin.write("go\n")
        client.stdin.flush()
        figures = json.loads(client.stdout.readline())
        client.wait()
        last = figures["last"]
        print(f"  {ROWS:,} rows, {int(ready[1]) if len(ready) == 2 else 0:,} subscribers, an UPDATE that moves a row: to the last subscriber"
              f" p50 {statistics.median(last) * 1000:.1f} ms, p99 {percentile(last, 0.99) * 1000:.1f} ms"
              f" (to the first p50 {statistics.median(figures['first']) * 1000:.1f} ms; debounce 50 ms; the statement sent to a psql session"
              f" in {statistics.median(figures['answer']) * 1000:.1f} ms)")
        keep_open.close()
        session.wait()
        delta = first_delta(port, "board", lambda: postgres.psql("UPDATE scores SET score = 5 WHERE id = 5000"))
        print(f"  its delta: {len(delta['deletions'])} deletions, {len(delta['insertions'])} insertions, {len(delta['moves'])} moves,"
              f" {len(delta['reloads'])} reloads")
        postgres.psql("CREATE PROCEDURE burst() LANGUAGE plpgsql AS $$ BEGIN FOR i IN 1..1000 LOOP "
                      "PERFORM pg_notify('scores', i::text); COMMIT; IF i % 10 = 0 THEN PERFORM pg_sleep(0.01); END IF; END LOOP; END $$;")
        before = evaluations(port)
        started = time.perf_counter()
        postgres.psql("CALL burst()")
        spanned = time.perf_counter() - started
        time.sleep(0.3)
        count = evaluations(port) - before
        print(f"  1,000 NOTIFYs, each its own transaction, over {spanned:.2f} s: {count} evaluations"
              f" ({spanned / 0.05:.0f} debounce windows of 50 ms in that time)")
    finally:
        process.terminate()
        process.wait()


def hundred_sources(postgres):
    postgres.psql("CREATE TABLE items (grp int NOT NULL, id int NOT NULL, v int NOT NULL, PRIMARY KEY (grp, id));"
                  "INSERT INTO items SELECT g, i, i FROM generate_series(0, 99) g, generate_series(1, 100) i;")
    sources = {f"s{g}": {"query": f"SELECT id, v FROM items WHERE grp = {g} ORDER BY v, id", "key": "id", "listen": [f"c{g}"]}
               for g in range(100)}
    process, port = server(postgres, sources)
    try:
        for g in range(100):
            put(port, f"g{g}", {"source": f"s{g}"})
        # Each second, every group's row changes (one statement a group, each notifying its own
        # channel), as 100 tables would each change once a second.
        statements = "".join(f"UPDATE items SET v = (random() * 1000)::int WHERE grp = {g} AND id = 1 + (random() * 99)::int;"
                             f"NOTIFY c{g};" for g in range(100))
        server_before, postgres_before = cpu(process.pid), postgres.cpu_seconds()
        started = time.perf_counter()
        for second in range(10):
            postgres.psql(statements)
            time.sleep(max(0.0, started + second + 1 - time.perf_counter()))
        time.sleep(0.3)
        seconds = time.perf_counter() - started
        print(f"  100 sources of 100 rows, each changed once a second for 10 s: the server {(cpu(process.pid) - server_before) / seconds * 1000:.0f} ms"
              f" of CPU a second, PostgreSQL {(postgres.cpu_seconds() - postgres_before) / seconds * 1000:.0f} ms (psql's statements included);"
              f" {evaluations(port)} evaluations")
    finally:
        process.terminate()
        process.wait()


def cpu(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


postgres = Postgres()
try:
    print("PostgreSQL 15, unix socket, fsync off:")
    one_source(postgres)
    hundred_sources(postgres)
finally:
    postgres.stop()
