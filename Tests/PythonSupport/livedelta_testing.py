"""What the Python suites (auth, changes, contract, browser) share: a free port, the real binary
started, a throwaway redis-server or Redis Cluster, and the batch reading of a delta
(../shared/design/delta-semantics.md)."""
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
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


def redis_cluster():
    """Starts a Redis Cluster of six nodes (three masters, each with a replica) that keep
    nothing on disk, yields its `redis-cluster://` URL once every node says it serves every
    slot, and stops them: the body of a pytest fixture (`yield from redis_cluster()`). A node
    counts as failing after 5 s unreachable, so that a loaded machine does not fail one over
    in the middle of a test."""
    directory = tempfile.mkdtemp()
    nodes = []
    try:
        for index in range(6):
            for _ in range(5):
                port, bus = free_port(), free_port()
                node = os.path.join(directory, str(index))
                os.makedirs(node, exist_ok=True)
                with open(os.path.join(node, "log"), "wb") as output:
                    process = subprocess.Popen(
                        ["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", node, "--cluster-enabled", "yes",
                         "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000", "--cluster-port", str(bus)],
                        stdout=output, stderr=subprocess.STDOUT)
                if _answers_ping(process, port):
                    nodes.append((process, port))
                    break
                process.kill()
                process.wait()
            else:
                raise RuntimeError("a cluster node did not start")
        addresses = [f"127.0.0.1:{port}" for _, port in nodes]
        subprocess.run(["redis-cli", "--cluster", "create", *addresses, "--cluster-replicas", "1", "--cluster-yes"],
                       check=True, capture_output=True)
        deadline = time.monotonic() + 30
        while True:
            infos = [subprocess.run(["redis-cli", "-p", str(port), "CLUSTER", "INFO"], capture_output=True, text=True).stdout for _, port in nodes]
            if all("cluster_state:ok" in info and "cluster_slots_ok:16384" in info for info in infos):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster did not come up: " + infos[0])
            time.sleep(0.05)
        yield "redis-cluster://" + ",".join(addresses)
    finally:
        for process, _ in nodes:
            process.kill()
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

    def request(self, method, path, body=None, content_type="application/json", headers=None):
        """A JSON request: the status and the answer read as JSON (None where empty)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url(path), data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, raw = error.code, error.read()
        return status, json.loads(raw) if raw else None

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)
        self.log.close()


def store_servers(request, tmp_path_factory, binary, flags=()):
    """The body of a module pytest fixture with params ["memory", "redis"] (and a `redis_url`
    fixture): one server on the memory store, or two replicas sharing a Redis; yields them
    and stops them."""
    directory = tmp_path_factory.mktemp(request.param)
    if request.param == "memory":
        instances = [ServerProcess(binary, list(flags), str(directory / "memory.log"))]
    else:
        url = request.getfixturevalue("redis_url")
        instances = [ServerProcess(binary, [*flags, "--session-store", url], str(directory / f"replica-{n}.log")) for n in range(2)]
    yield instances
    for instance in instances:
        instance.stop()
