#!/usr/bin/env bash
# A tree built once builds again in seconds, whatever ran in between: `make run`'s release
# build, made before and after the smoke test's (a folder of its own, other flags), compiles
# nothing the second time; nor does it after the debug build `make test` makes. (The smoke test
# once built into .build/release with --static-swift-stdlib, and each build undid the other:
# about 7 minutes every time someone went from one to the other.) Leaves `make run` ready.
set -euo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}

"$swift" build -c release --product livedelta 2>&1 | tail -1
"$swift" build -c release --product livedelta --static-swift-stdlib --scratch-path .build-static 2>&1 | tail -1
"$swift" build --product livedelta 2>&1 | tail -1
started=$(date +%s%N)
again=$("$swift" build -c release --product livedelta 2>&1)
seconds=$(( ($(date +%s%N) - started) / 1000000 ))
# The embedding commands may run again (their outputs are shared by the configurations), but
# they leave text that has not changed as it was, so nothing compiles.
if echo "$again" | grep -E "Compiling"; then
    echo "FAIL: make run's build compiled again after the smoke test's and the debug build (above)"
    exit 1
fi
echo "builds: make run's release build is up to date after the smoke test's and the debug build (${seconds} ms)"
