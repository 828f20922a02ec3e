#!/usr/bin/env bash
# Tokens, tenants and scopes against the real binary ($1, default .build/debug/livedelta), with
# tokens minted by PyJWT (Tests/Auth/test_auth.py), on the memory store and on Redis (a
# redis-server the tests start), two replicas included.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/livedelta}
source Tests/PythonSupport/venv.sh
venv=$(python_venv auth Tests/Auth/requirements.txt)
LIVEDELTA_BINARY="$binary" "$venv/bin/pytest" -q -p no:cacheprovider Tests/Auth/test_auth.py
