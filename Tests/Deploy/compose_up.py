"""deploy/compose.yaml under podman-compose: `up WORK` starts Redis and the server as the file
says, waits for the server's /ready on the port it publishes, writes and reads a session through
it (so through Redis, by its service name) and runs the server's health check; `down WORK`
removes them.

The file is used as it is but for what this machine needs: the images built here (never pulled,
never built from the Dockerfile, whose base images no registry here serves), a free host port
for the server, and the Redis command without its leading `redis-server`, which the official
image's entrypoint takes and the image built here (Redis itself as its entrypoint) does not."""

import os
import subprocess
import sys
import urllib.error

import yaml

from kube_play import IMAGES, check_session, free_port, podman, wait_ready

PROJECT = "livedelta-deploy-check"


def compose(work, *arguments, check=True):
    done = subprocess.run(["podman-compose", "-p", PROJECT, "-f", os.path.join(work, "compose.yaml"), *arguments],
                          capture_output=True, text=True)
    if check and done.returncode != 0:
        raise SystemExit(f"FAIL: podman-compose {' '.join(arguments)}: {done.stderr[-2000:] or done.stdout[-2000:]}")
    return done.stdout


def localized(port):
    with open("deploy/compose.yaml") as file:
        document = yaml.safe_load(file)
    services = document["services"]
    redis = services["redis"]
    redis["image"] = IMAGES[redis["image"]]
    assert redis["command"][0] == "redis-server", redis["command"]
    redis["command"] = redis["command"][1:]
    server = services["livedelta"]
    del server["build"]
    server["image"] = IMAGES[server["image"]]
    assert server["ports"] == ["8080:8080"], server["ports"]
    server["ports"] = [f"127.0.0.1:{port}:8080"]
    return document


def up(work):
    port = free_port()
    with open(os.path.join(work, "compose.yaml"), "w") as file:
        yaml.safe_dump(localized(port), file)
    compose(work, "up", "-d")
    base = f"http://127.0.0.1:{port}"
    ready, _ = wait_ready(base, 60)
    if not ready:
        print(compose(work, "logs", check=False)[-3000:], file=sys.stderr)
        raise SystemExit("FAIL: the server compose.yaml starts is not ready")
    check_session(base)
    server = podman("ps", "--format", "{{.Names}}", "--filter", f"label=io.podman.compose.project={PROJECT}",
                    "--filter", "label=com.docker.compose.service=livedelta").split()
    assert server, "no container of the livedelta service"
    # The file's own health check (`livedelta healthcheck --ready`), as podman runs it.
    probe = subprocess.run(["podman", "healthcheck", "run", server[0]], capture_output=True, text=True)
    assert probe.returncode == 0, f"the health check of {server[0]} fails: {probe.stdout}{probe.stderr}"
    print(f"  compose.yaml: /ready 200 at {base}; a session written and read through Redis by its service name; health check passes")


def main():
    action, work = sys.argv[1], sys.argv[2]
    if action == "down":
        compose(work, "down", check=False)
        # podman-compose 1.0 leaves the project's network behind.
        podman("network", "rm", "-f", f"{PROJECT}_default", check=False)
        return
    try:
        up(work)
    except urllib.error.URLError as error:
        raise SystemExit(f"FAIL: {error}")


if __name__ == "__main__":
    main()
