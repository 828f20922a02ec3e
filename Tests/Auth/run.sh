#!/usr/bin/env bash
# Tokens, tenants and scopes against the real binary ($1, default .build/debug/livedelta), with
# tokens minted by PyJWT (Tests/Auth/test_auth.py), on the memory store and on Redis (a
# redis-server the tests start), two replicas included.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/livedelta}
venv=.build/auth-venv
if [ ! -x "$venv/bin/pytest" ] || ! cmp -s Tests/Auth/requirements.txt "$venv/requirements.txt"; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r Tests/Auth/requirements.txt
    cp Tests/Auth/requirements.txt "$venv/requirements.txt"
fi
LIVEDELTA_BINARY="$binary" "$venv/bin/pytest" -q -p no:cacheprovider Tests/Auth/test_auth.py
