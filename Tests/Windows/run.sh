#!/usr/bin/env bash
# Windows of sectioned sessions against the real binary ($1, default .build/debug/livedelta):
# random sessions, random writes of every kind and random scrolls, followed in every format and
# replayed by appliers that are not LiveDelta's, on the memory store and on Redis (two
# replicas). Flat windows are checked by WindowTests (swift test). The tools are the changes
# suite's (the same pinned requirements, the same venv).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/livedelta}
source Tests/PythonSupport/venv.sh
venv=$(python_venv changes Tests/Changes/requirements.txt)
LIVEDELTA_BINARY="$binary" "$venv/bin/pytest" -q -p no:cacheprovider Tests/Windows/test_section_windows.py "${@:2}"
