"""What the Python suites (auth, changes, contract, browser) share: a free port, a throwaway
redis-server, and the batch reading of a delta (../shared/design/delta-semantics.md)."""
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_server():
    """Starts a redis-server that keeps nothing on disk, yields its URL, and stops it: the body
    of a pytest fixture (`yield from redis_server()`)."""
    directory = tempfile.mkdtemp()
    port = free_port()
    process = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no", "--dir", directory],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}"
    process.terminate()
    process.wait()


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
