#!/usr/bin/env bash
# Writes by change against the real binary ($1, default .build/debug/livedelta): random sessions
# and change lists checked against appliers in the test and Python's jsonpatch, refusals, and
# 8 writers on one session, on the memory store and on Redis (two replicas).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/livedelta}
source Tests/PythonSupport/venv.sh
venv=$(python_venv changes Tests/Changes/requirements.txt)
LIVEDELTA_BINARY="$binary" "$venv/bin/pytest" -q -p no:cacheprovider Tests/Changes/test_changes.py "${@:2}"
