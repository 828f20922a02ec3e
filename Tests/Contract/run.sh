#!/usr/bin/env bash
# The contract checks, against the real binary ($1, default .build/debug/livedelta):
#  1. openapi-spec-validator on openapi.yaml;
#  2. schemathesis: generated requests, with response-schema, status-code, header and
#     content-type checks (all checks, less the exceptions below), bounded in examples;
#  3. a client generated from the spec by openapi-python-client runs the README's examples;
#  4. every delta format replays exactly by appliers that are not LiveDelta's (formats_check.py:
#     the jsonpatch package, an Android-semantics replayer, a keyed one), on random collections.
# The tools come pinned from PyPI into .build/contract-venv (made once).
#
# Accepted exceptions, each with its reason:
#  - positive_data_acceptance: requests valid by the schema may still be refused by rules JSON
#    Schema cannot state: an item without the id that `idKey` names, an id twice where ids must
#    be unique, items sent to a session holding sections, a version other than the current one.
#  - sessionEvents (GET /sessions/{id}/events) is left out of schemathesis: its answer is a
#    stream that stays open for as long as the session lives, which a request-and-answer tool
#    can only time out on. LiveTests checks it end to end; its long-poll twin,
#    sessionChanges, answers at once for a token the server cannot read and is checked here.
#  - schemathesis's coverage phase: it fails inside the tool on this machine's Python 3.11.7
#    (CPython's "AST constructor recursion depth mismatch", gh-106905, fixed in 3.11.8), on
#    whichever operation hypothesis describes a filter for; the other phases (examples, fuzzing,
#    stateful) run on every operation.
set -euo pipefail
cd "$(dirname "$0")/../.."
binary=${1:-.build/debug/livedelta}
examples=${CONTRACT_EXAMPLES:-100}
source Tests/PythonSupport/venv.sh
venv=$(python_venv contract Tests/Contract/requirements.txt)
"$venv/bin/openapi-spec-validator" openapi.yaml

work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
# With tokens checked, as a production deployment runs: every tool sends a token minted by
# PyJWT for every scope (schemathesis also checks that an operation refuses a request
# without one, as its security says).
head -c 48 /dev/urandom | base64 > "$work/secret"
token=$("$venv/bin/python" -c 'import jwt, sys, time; print(jwt.encode({"tenant": "contract", "exp": int(time.time()) + 7200, "scope": "diff sessions:read sessions:write sessions:subscribe admin"}, open(sys.argv[1], "rb").read().rstrip(b"\n"), algorithm="HS256"))' "$work/secret")
export LIVEDELTA_TOKEN="$token"
"$binary" --host 127.0.0.1 --port 0 --log-level notice --auth jwt --jwt-secret-file "$work/secret" > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 200); do grep -q "port=" "$work/server.log" && break; sleep 0.05; done
port=$(grep -o 'port=[0-9]*' "$work/server.log" | head -1 | cut -d= -f2)
[ -n "$port" ] || { echo "the server did not start:"; cat "$work/server.log"; exit 1; }
url="http://127.0.0.1:$port"

schemathesis() {
    "$venv/bin/schemathesis" run openapi.yaml --url "$url" --checks all --exclude-checks positive_data_acceptance \
        --max-examples "$examples" --no-color --exclude-operation-id sessionEvents --header "Authorization: Bearer $token" "$@"
}
echo "== schemathesis: examples and fuzzing, every operation"
schemathesis --phases examples,fuzzing --workers 2
# One worker: scenarios that ran side by side shared the server, so one scenario's PUT could
# re-create (as PUT may) a session another had just deleted, between that one's DELETE and
# its GET, and the deleted-resource check (ST301) then blamed the server.
# use_after_free (ST301) is left out of it: it takes a session deleted once for gone for the
# rest of the scenario, but POST /sessions/{id}/update and PUT create the session anew, as
# documented, and a scenario that updates after its DELETE then sees it again (seen: DELETE 204,
# update 201, a DELETE refused for its If-Match, GET 200). That a deleted session is 404 is
# checked by the end-to-end tests (SessionTests, LiveLimitTests).
# ensure_resource_availability (ST302) is left out too: schemathesis sends one generated
# Idempotency-Key value again in later scenarios, and a POST /sessions whose key and body it
# sent before is answered, as the key promises, with the first answer, naming a session a
# scenario since deleted (seen: POST 201 replayed, GET 404). That a created session can be read,
# and what a key's retry answers, the end-to-end tests check (SessionTests, IdempotencyTests).
echo "== schemathesis: stateful scenarios, every operation"
schemathesis --phases stateful --workers 1 --exclude-checks positive_data_acceptance,use_after_free,ensure_resource_availability

echo "== a generated client runs the README's examples"
"$venv/bin/openapi-python-client" generate --path openapi.yaml --output-path "$work/livedelta_client" --meta none > "$work/generate.log" 2>&1 \
    || { cat "$work/generate.log"; exit 1; }
PYTHONPATH="$work" "$venv/bin/python" Tests/Contract/client_examples.py "$url"

echo "== every delta format replays exactly (jsonpatch, Android and keyed replayers)"
"$venv/bin/python" Tests/Contract/formats_check.py "$url"
kill "$server"
wait "$server" 2>/dev/null || true
server=""
