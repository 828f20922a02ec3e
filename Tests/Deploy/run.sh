#!/usr/bin/env bash
# deploy/ as an operator uses it, on this machine: the Prometheus rules through promtool, the
# Kubernetes manifests under `podman kube play` and compose.yaml under `podman-compose` (Redis
# and the server, answering /ready, the probes passing), and the rules' and the dashboard's
# metrics against a running server's /metrics (EndToEndTests' DeployTests). No registry is reachable: the images are built FROM
# scratch from this machine's binaries (the release build the smoke test makes, redis-server,
# and a shell and curl for podman's httpGet probes).
set -euo pipefail
cd "$(dirname "$0")/../.."

# Each tool from Debian where missing: promtool without the server's recommended extras
# (node exporter, web assets); podman as the smoke test installs it (with catatonit, for the
# pods' pause image).
need() { command -v "$1" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $2 >/dev/null; }; }
need promtool "--no-install-recommends prometheus"
need podman "podman buildah runc"
need buildah buildah
need curl curl
need podman-compose podman-compose
python3 -c 'import yaml' 2>/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-yaml >/dev/null; }

promtool check rules deploy/prometheus/alerts.yaml

scratch=.build-static
swift build -c release --product livedelta --static-swift-stdlib --scratch-path "$scratch" 2>&1 | grep -vE "warning: the use of .mktemp" || true
binary="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/livedelta"

work=$(mktemp -d)
cleanup() {
    python3 Tests/Deploy/kube_play.py down "$work" >/dev/null 2>&1 || true
    python3 Tests/Deploy/compose_up.py down "$work" >/dev/null 2>&1 || true
    podman rmi -f livedelta-deploy redis-deploy >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

# Puts `file` at `target` in the image folder `root`, with every library it loads.
put() {
    local root=$1 file=$2 target=$3
    install -D -m 0755 "$file" "$root$target"
    for library in $(ldd "$file" | grep -o '/[^ ]*'); do install -D "$(readlink -f "$library")" "$root$library"; done
}

# An image of the folder `root-NAME` with `entrypoint`, run as `user`.
image() {
    local name=$1 entrypoint=$2 user=$3
    local root="$work/root-$name"
    mkdir -p "$root/tmp"
    local container
    container=$(buildah from scratch)
    buildah copy "$container" "$root" / >/dev/null
    buildah config --entrypoint "$entrypoint" --user "$user" "$container"
    buildah commit --quiet "$container" "$name" >/dev/null
    buildah rm "$container" >/dev/null
}
put "$work/root-livedelta-deploy" "$binary" /usr/local/bin/livedelta
# podman runs an httpGet probe as `/bin/sh -c "curl -f URL || exit 1"` in the container.
put "$work/root-livedelta-deploy" /usr/bin/curl /usr/bin/curl
put "$work/root-livedelta-deploy" "$(readlink -f /bin/sh)" /bin/sh
# glibc loads these to resolve names (`localhost`, in the probe's URL) and ldd does not list them.
for module in /lib/x86_64-linux-gnu/libnss_files.so.2 /lib/x86_64-linux-gnu/libnss_dns.so.2; do
    [ -e "$module" ] && install -D "$module" "$work/root-livedelta-deploy$module"
done
image livedelta-deploy '["/usr/local/bin/livedelta"]' 10001
put "$work/root-redis-deploy" /usr/bin/redis-server /usr/bin/redis-server
# compose.yaml's health check asks Redis with redis-cli, as the official image has it.
put "$work/root-redis-deploy" /usr/bin/redis-cli /usr/bin/redis-cli
# As the official image runs it: no protected mode (other pods connect; no password here).
image redis-deploy '["/usr/bin/redis-server", "--protected-mode", "no"]' 0

# Containers here may not raise their open-file limit (runc's default): give them the host's.
printf '[containers]\ndefault_ulimits = ["nofile=1024:1024", "nproc=1000:1000"]\n' > "$work/containers.conf"
CONTAINERS_CONF="$work/containers.conf" python3 Tests/Deploy/kube_play.py up "$work"
python3 Tests/Deploy/kube_play.py down "$work" >/dev/null 2>&1 || true
CONTAINERS_CONF="$work/containers.conf" python3 Tests/Deploy/compose_up.py up "$work"
echo "deploy: rules pass promtool; the manifests under podman kube play and compose.yaml under podman-compose answer /ready"
