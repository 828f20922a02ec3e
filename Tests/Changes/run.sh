#!/usr/bin/env bash
# Writes by change against the real binary ($1, default .build/debug/livedelta): random sessions
# and change lists checked against appliers in the test and Python's jsonpatch, refusals, and
# 8 writers on one session, on the memory store and on Redis (two replicas).
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/livedelta}
venv=.build/changes-venv
if [ ! -x "$venv/bin/pytest" ] || ! cmp -s Tests/Changes/requirements.txt "$venv/requirements.txt"; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/Changes/requirements.txt
    cp Tests/Changes/requirements.txt "$venv/requirements.txt"
fi
LIVEDELTA_BINARY="$binary" "$venv/bin/pytest" -q -p no:cacheprovider Tests/Changes/test_changes.py "${@:2}"
