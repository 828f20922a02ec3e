#!/usr/bin/env bash
# Container smoke test for machines where no base image can be pulled: builds an image FROM
# scratch that holds the release binary and the shared libraries it needs (ldd), runs it
# with podman, checks /health and a /diff from outside the container, sends SIGTERM and
# checks a clean exit. Prints the image size and the time from `podman run` to the first 200.
set -euo pipefail
cd "$(dirname "$0")/.."
name=livedelta-smoke
port=${SMOKE_PORT:-18181}

need() { command -v "$1" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc curl >/dev/null; }; }
need podman; need buildah; need runc; need curl

# A build folder of its own: built with other flags in .build, the next `make run` rebuilt every
# module (about 7 minutes) and this one did the same after it.
scratch=.build-static
swift build -c release --product livedelta --static-swift-stdlib --scratch-path "$scratch" 2>&1 | grep -vE "warning: the use of .mktemp" || true
binary="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/livedelta"

rootfs=$(mktemp -d)
cleanup() {
    podman rm -f "$name" >/dev/null 2>&1 || true
    podman rmi -f "$name" >/dev/null 2>&1 || true
    rm -rf "$rootfs"
}
trap cleanup EXIT
cleanup

# The binary and every library it loads, at the paths the loader looks for them.
install -D -m 0755 "$binary" "$rootfs/usr/local/bin/livedelta"
for library in $(ldd "$binary" | grep -o '/[^ ]*'); do
    mkdir -p "$rootfs$(dirname "$library")"
    cp -L "$library" "$rootfs$library"
done
mkdir -p "$rootfs/tmp"

container=$(buildah from scratch)
buildah copy "$container" "$rootfs" / >/dev/null
buildah config --entrypoint '["/usr/local/bin/livedelta"]' --cmd serve --user 10001 --port 8080 \
    --stop-signal SIGTERM --env LIVEDELTA_HOST=0.0.0.0 --env LIVEDELTA_PORT=8080 "$container"
buildah commit --quiet "$container" "$name" >/dev/null
buildah rm "$container" >/dev/null
size=$(podman image inspect "$name" --format '{{.Size}}')
echo "image: $name, $(( size / 1024 / 1024 )) MiB ($size bytes)"

run=(podman run -d --name "$name" --runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1000:1000)
started=$(date +%s%N)
if ! "${run[@]}" -p "127.0.0.1:$port:8080" "$name" >/dev/null 2>&1; then
    # Where port publishing is not available, share the host's network instead.
    podman rm -f "$name" >/dev/null 2>&1 || true
    started=$(date +%s%N)
    "${run[@]}" --network host -e LIVEDELTA_PORT="$port" "$name" >/dev/null
fi
for _ in $(seq 1000); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ]; then break; fi
    sleep 0.01
done
ready=$(date +%s%N)
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")" = 200 ] || { podman logs "$name"; echo "FAIL: /health"; exit 1; }
echo "first 200 from /health $(( (ready - started) / 1000000 )) ms after podman run (target < 1000 ms)"

answer=$(curl -s "http://127.0.0.1:$port/diff" -H 'Content-Type: application/json' -d '{"old":[1,2,3],"new":[3,1,4]}')
expected='{"animation":"preciseAnimations","delta":{"deletions":[1],"insertions":[2],"moves":[{"source":0,"target":1}],"reloads":[]},"changeCount":3,"oldCount":3,"newCount":3}'
[ "$answer" = "$expected" ] || { echo "FAIL: /diff answered $answer"; exit 1; }
echo "/diff from outside the container: ok"

podman stop --time 10 "$name" >/dev/null
code=$(podman inspect "$name" --format '{{.State.ExitCode}}')
podman logs "$name" 2>&1 | tail -n 3
[ "$code" = 0 ] || { echo "FAIL: exit code $code after SIGTERM"; exit 1; }
echo "SIGTERM: clean exit (0)"
echo "smoke test passed"
