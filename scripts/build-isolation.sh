#!/usr/bin/env bash
# A tree built once builds again in seconds, whatever ran in between: `make run`'s release
# build, which is the smoke test's (.build-static, Swift's libraries linked in), compiles
# nothing after the debug build `make test` makes. (The smoke test once built into
# .build/release with --static-swift-stdlib, and each build undid the other: about 7 minutes
# every time someone went from one to the other. Then `make run` had a release tree of its own,
# which cost CI a third full build, about 7.5 minutes, only for this check.) Leaves `make run`
# ready.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
run_build=("$swift" build -c release --product livedelta --static-swift-stdlib --scratch-path .build-static)

"${run_build[@]}" 2>&1 | tail -1
"$swift" build --product livedelta 2>&1 | tail -1
started=$(date +%s%N)
again=$("${run_build[@]}" 2>&1)
seconds=$(( ($(date +%s%N) - started) / 1000000 ))
# The embedding commands may run again (their outputs are shared by the configurations), but
# they leave text that has not changed as it was, so nothing compiles.
if echo "$again" | grep -E "Compiling"; then
    echo "FAIL: make run's build compiled again after the debug build (above)"
    exit 1
fi
echo "builds: make run's release build (the smoke test's) is up to date after the debug build (${seconds} ms)"
