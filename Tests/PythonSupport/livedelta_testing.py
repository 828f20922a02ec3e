"""What the Python suites (auth, changes, contract, browser) share: a free port, the real binary
started, a throwaway redis-server, and the batch reading of a delta
(../shared/design/delta-semantics.md)."""
import os
import socket
import subprocess
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_server():
    """Starts a redis-server that keeps nothing on disk, yields its URL, and stops it: the body
    of a pytest fixture (`yield from redis_server()`). A port found free may be taken before
    the server binds it (then the server exits, and whatever took the port would answer in its
    place): the server counts as started only once it is running and answers PING itself, and
    another port is tried otherwise."""
    directory = tempfile.mkdtemp()
    failures = []
    for _ in range(5):
        port = free_port()
        # Its log in a file, not a pipe: a pipe nobody reads would stop the server once full.
        log = os.path.join(directory, f"redis-{port}.log")
        with open(log, "wb") as output:
            process = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", directory],
                                       stdout=output, stderr=subprocess.STDOUT)
        if _answers_ping(process, port):
            break
        process.kill()
        process.wait()
        with open(log, errors="replace") as output:
            failures.append(f"port {port}: {output.read().strip()[-300:] or 'no PING answer'}")
    else:
        raise RuntimeError("redis-server did not start: " + "; ".join(failures))
    yield f"redis://127.0.0.1:{port}"
    process.terminate()
    process.wait()


def _answers_ping(process, port):
    """Whether `process` is still running and a PING on `port` is answered, within 5 s."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as connection:
                connection.sendall(b"PING\r\n")
                if connection.recv(16).startswith(b"+PONG") and process.poll() is None:
                    return True
        except OSError:
            pass
        time.sleep(0.05)
    return False


def batch_replay(old, delta, new):
    """UIKit's batch reading: deletions at old positions, insertions and move targets at new
    ones, the other survivors in order in the places left, reloads after."""
    moved = {m["source"]: m["target"] for m in delta["moves"]}
    result = [None] * len(new)
    for position in delta["insertions"]:
        result[position] = new[position]
    for source, target in moved.items():
        result[target] = old[source]
    stayers = iter([old[i] for i in range(len(old)) if i not in delta["deletions"] and i not in moved])
    for position in range(len(new)):
        if result[position] is None:
            result[position] = next(stayers)
    for reload in delta["reloads"]:
        result[reload["target"]] = new[reload["target"]]
    return result


class ServerProcess:
    """The real binary on a free port with `flags`, its output in `log_path`, started once it
    answers /health; the suites add how they send requests."""

    def __init__(self, binary, flags, log_path):
        self.port = free_port()
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.process = subprocess.Popen([binary, "--host", "127.0.0.1", "--port", str(self.port), *flags],
                                        stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(400):
            try:
                urllib.request.urlopen(self.url("/health"), timeout=1).read()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("the server did not start: " + open(log_path).read())
                time.sleep(0.05)
        raise RuntimeError("the server did not start")

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)
        self.log.close()
