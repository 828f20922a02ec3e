"""deploy/kubernetes under `podman kube play`: `up WORK` plays Redis, then the server with the
store pointed at Redis's pod, waits for the server's /ready, writes and reads a session
through it and runs the container's liveness probe; `down WORK` removes what `up` played.

The manifests are played as they are but for what this machine needs: the images built here
(never pulled), host ports of podman's own choosing (free ones), and the Redis address, which a
cluster's Service name gives and podman (which plays no Services) does not: the Redis pod's
address instead. Where the pods' bridge network
cannot be reached from the host, both are played on the host's network instead, on free ports.
Each plays one replica: podman publishes a pod's ports on the host, so two would share one."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import yaml

MANIFESTS = "deploy/kubernetes"
IMAGES = {"localhost/livedelta:latest": "localhost/livedelta-deploy:latest",
          "docker.io/library/redis:7.0-bookworm": "localhost/redis-deploy:latest"}


def podman(*arguments, check=True):
    done = subprocess.run(["podman", *arguments], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise SystemExit(f"FAIL: podman {' '.join(arguments)}: {done.stderr or done.stdout}")
    return done.stdout


def free_port():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return listener.getsockname()[1]


def load(name):
    with open(os.path.join(MANIFESTS, name)) as file:
        return [document for document in yaml.safe_load_all(file) if document]


def containers(documents):
    for document in documents:
        if document["kind"] == "Deployment":
            yield document, document["spec"]["template"]["spec"]["containers"]


def localize(documents):
    """The images built here, never pulled."""
    for _, listed in containers(documents):
        for container in listed:
            assert container["image"] in IMAGES, f"an image this test does not build: {container['image']}"
            container["image"] = IMAGES[container["image"]]
            container["imagePullPolicy"] = "Never"
    return documents


def unpublished(documents, host_network):
    """Podman publishes each containerPort on the host's same port, which a cluster does not
    (and something here may hold): a free host port each instead (on the host's network, none:
    the container's own port is the host's), and so one replica (its pods would all take
    that port)."""
    for deployment, listed in containers(documents):
        deployment["spec"]["replicas"] = 1
        for container in listed:
            if host_network:
                container.pop("ports", None)
            for port in container.get("ports", []):
                port["hostPort"] = free_port()


def env(container, name, value):
    for entry in container["env"]:
        if entry["name"] == name:
            entry["value"] = value
            return
    raise SystemExit(f"FAIL: the manifest's {container['name']} sets no {name}")


def play(work, name, documents, host_network):
    path = os.path.join(work, name)
    with open(path, "w") as file:
        yaml.safe_dump_all(documents, file)
    arguments = ["kube", "play", "--replace"] + (["--network", "host"] if host_network else []) + [path]
    podman(*arguments)
    return path


def address(pod_label):
    """The address of the (first) running container of the pod a Deployment labelled so made."""
    for line in podman("ps", "--format", "{{.Names}}", "--filter", f"label=app={pod_label}").split():
        details = json.loads(podman("inspect", line))[0]
        for network in (details.get("NetworkSettings", {}).get("Networks") or {}).values():
            if network.get("IPAddress"):
                return line, network["IPAddress"]
    return None, None


def get(url, timeout=2):
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        return answer.status, answer.read()


def wait_ready(base, seconds):
    """Whether /ready answered 200 within `seconds`, and whether anything answered at all."""
    deadline = time.time() + seconds
    last = None
    reached = False
    while time.time() < deadline:
        try:
            status, _ = get(f"{base}/ready")
            if status == 200:
                return True, True
        except urllib.error.HTTPError as error:  # 503 while Redis is not up yet
            reached = True
            last = error
        except Exception as error:  # refused, reset: not serving yet, or not reachable
            last = error
        time.sleep(0.2)
    print(f"  {base}/ready did not answer 200 in {seconds} s: {last}", file=sys.stderr)
    return False, reached


def up(work, host_network):
    redis = localize(load("redis.yaml"))
    server = localize(load("livedelta.yaml"))
    for documents in (redis, server):
        unpublished(documents, host_network)
    redis_port = 6379
    server_port = 8080
    if host_network:
        redis_port, server_port = free_port(), free_port()
        for _, listed in containers(redis):
            listed[0]["args"] += ["--port", str(redis_port), "--bind", "127.0.0.1"]
            listed[0]["readinessProbe"]["tcpSocket"]["port"] = redis_port
    play(work, "redis.yaml", redis, host_network)
    if host_network:
        redis_address = "127.0.0.1"
    else:
        _, redis_address = address("livedelta-redis")
        if redis_address is None:
            raise SystemExit("FAIL: the Redis pod has no address")
    for _, listed in containers(server):
        container = listed[0]
        env(container, "LIVEDELTA_SESSION_STORE", f"redis://{redis_address}:{redis_port}")
        if host_network:
            env(container, "LIVEDELTA_PORT", str(server_port))
            env(container, "LIVEDELTA_HOST", "127.0.0.1")
            container["livenessProbe"]["httpGet"]["port"] = server_port
            container["readinessProbe"]["httpGet"]["port"] = server_port
    play(work, "livedelta.yaml", server, host_network)
    name, server_address = (None, "127.0.0.1") if host_network else address("livedelta")
    if server_address is None:
        raise SystemExit("FAIL: the server's pod has no address")
    base = f"http://{server_address}:{server_port}"
    return base, *wait_ready(base, 30 if not host_network else 60)


def check_session(base):
    """The server at `base` writes a session and reads it back (from Redis, its store)."""
    body = json.dumps({"items": [{"id": 1}, {"id": 2}]}).encode()
    request = urllib.request.Request(f"{base}/sessions/deployed", data=body, method="PUT", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.status == 201, answer.status
    status, shown = get(f"{base}/sessions/deployed")
    assert status == 200 and json.loads(shown)["items"] == [{"id": 1}, {"id": 2}], shown


def check(base):
    """The server serves sessions from Redis, and each container's own probe passes."""
    check_session(base)
    for line in podman("ps", "--format", "{{.Names}}", "--filter", "label=app=livedelta").split():
        # The liveness probe as podman runs it (curl inside the container, as a kubelet would ask).
        probe = subprocess.run(["podman", "healthcheck", "run", line], capture_output=True, text=True)
        command = podman("inspect", line, "--format", "{{json .Config.Healthcheck}}", check=False).strip()
        assert probe.returncode == 0, f"the liveness probe of {line} ({command}) fails: {probe.stdout}{probe.stderr}"
    print(f"  /ready 200 at {base}; a session written and read through Redis; liveness probes pass")


def down(work):
    for name in ("livedelta.yaml", "redis.yaml"):
        path = os.path.join(work, name)
        if os.path.exists(path):
            podman("kube", "down", path, check=False)


def main():
    action, work = sys.argv[1], sys.argv[2]
    if action == "down":
        down(work)
        return
    try:
        base, ready, reached = up(work, host_network=False)
    except SystemExit as failure:  # podman could not make the pods' network here
        print(f"  on podman's network: {failure}", file=sys.stderr)
        base, ready, reached = None, False, False
    if not ready and not reached:
        print("  the pods' network cannot be used from here: again on the host's network", file=sys.stderr)
        down(work)
        base, ready, _ = up(work, host_network=True)
    if not ready:
        for line in podman("ps", "-a", "--format", "{{.Names}}").split():
            print(f"--- {line}\n{podman('logs', line, check=False)}", file=sys.stderr)
        raise SystemExit("FAIL: the server played from deploy/kubernetes never answered /ready")
    check(base)


if __name__ == "__main__":
    main()
