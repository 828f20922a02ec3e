"""Who may touch a session, against the real binary: tokens minted by PyJWT with keys made by
cryptography, the attacks an auth layer must refuse, tenants kept apart on both stores (two
replicas on one Redis included), scopes per route, a stream ended at its token's expiry, and
nothing of a token or of why it was refused in an answer or a log."""
import base64
import hashlib
import hmac
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PythonSupport"))
from livedelta_testing import ServerProcess, redis_cluster, redis_server  # noqa: E402

BINARY = os.environ.get("LIVEDELTA_BINARY", ".build/debug/livedelta")
ISSUER = "https://issuer.example"
AUDIENCE = "livedelta"
ALL_SCOPES = "diff sessions:read sessions:write sessions:subscribe"


def public_pem(private_key):
    return private_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


class Keys:
    """Every kind of key the server is given, with the private halves the tests sign with."""

    def __init__(self, directory):
        self.secret = os.urandom(40).hex().encode()
        self.old_secret = os.urandom(40).hex().encode()
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.ed = ed25519.Ed25519PrivateKey.generate()
        self.jwks_rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.files = {}
        for name, content in [("secret", self.secret + b"\n"), ("old-secret", self.old_secret), ("rsa.pem", public_pem(self.rsa)),
                              ("ec.pem", public_pem(self.ec)), ("ed.pem", public_pem(self.ed))]:
            path = os.path.join(directory, name)
            with open(path, "wb") as f:
                f.write(content)
            self.files[name] = path
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.jwks_rsa.public_key()))
        jwk.update({"kid": "set-1", "alg": "RS256", "use": "sig"})
        self.files["jwks"] = os.path.join(directory, "jwks.json")
        with open(self.files["jwks"], "w") as f:
            json.dump({"keys": [jwk]}, f)

    def flags(self):
        return ["--auth", "jwt", "--jwt-secret-file", self.files["secret"], "--jwt-secret-file", self.files["old-secret"],
                "--jwt-public-key-file", self.files["rsa.pem"], "--jwt-public-key-file", self.files["ec.pem"],
                "--jwt-public-key-file", self.files["ed.pem"], "--jwks", self.files["jwks"],
                "--jwt-issuer", ISSUER, "--jwt-audience", AUDIENCE]


class Server(ServerProcess):
    def __init__(self, flags, log_path):
        super().__init__(BINARY, ["--log-level", "info", *flags], log_path)

    def request(self, method, path, body=None, token=None, headers=None):
        """(status, headers, parsed JSON or raw text)."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url(path), data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, answer_headers, raw = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, answer_headers, raw = error.code, error.headers, error.read()
        text = raw.decode()
        try:
            return status, answer_headers, json.loads(text) if text else None
        except ValueError:
            return status, answer_headers, text

    def log_text(self):
        with open(self.log_path) as f:
            return f.read()


def claims(**changes):
    now = int(time.time())
    base = {"iss": ISSUER, "aud": AUDIENCE, "exp": now + 300, "iat": now, "tenant": "acme", "scope": ALL_SCOPES, "sub": "tester"}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def jwk(key, kid):
    """An RSA key's public half as a JWK Set member, under `kid`."""
    value = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    value.update({"kid": kid, "alg": "RS256"})
    return value


def hs256(keys, **changes):
    return jwt.encode(claims(**changes), keys.secret, algorithm="HS256")


@pytest.fixture(scope="module")
def keys():
    with tempfile.TemporaryDirectory() as directory:
        yield Keys(directory)


@pytest.fixture(scope="module")
def redis_url():
    yield from redis_server()


@pytest.fixture(scope="module", params=["redis", "cluster"])
def shared_store(request):
    """A session store shared by replicas: one Redis, or a Redis Cluster, where a tenant's
    count and its sessions are in different slots."""
    yield from (redis_server() if request.param == "redis" else redis_cluster())


@pytest.fixture(scope="module")
def server(keys, tmp_path_factory):
    instance = Server(keys.flags(), str(tmp_path_factory.mktemp("server") / "server.log"))
    yield instance
    instance.stop()


def assert_invalid_token(server, token, headers=None):
    status, answer_headers, body = server.request("POST", "/diff", {"old": [1], "new": [1, 2]}, token=token, headers=headers)
    assert status == 401, body
    assert body["error"]["code"] == "invalid_token"
    assert answer_headers["WWW-Authenticate"] == 'Bearer realm="livedelta", error="invalid_token"'
    # No detail of why: the same answer whatever was wrong.
    assert body["error"]["message"] == "the bearer token was not accepted"
    return body


# MARK: - Tokens


def test_health_and_ready_need_no_token(server):
    assert server.request("GET", "/health")[0] == 200
    assert server.request("GET", "/ready")[0] == 200


def test_no_token_is_a_401_without_an_error_code(server):
    status, headers, body = server.request("POST", "/diff", {"old": [1], "new": [2]})
    assert status == 401
    assert body["error"]["code"] == "invalid_token"
    assert headers["WWW-Authenticate"] == 'Bearer realm="livedelta"'
    status, headers, _ = server.request("POST", "/diff", {"old": [1], "new": [2]}, headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert status == 401


def test_every_kind_of_key_is_accepted(server, keys):
    tokens = {
        "HS256": hs256(keys),
        "HS256, the previous secret": jwt.encode(claims(), keys.old_secret, algorithm="HS256"),
        "RS256": jwt.encode(claims(), keys.rsa, algorithm="RS256"),
        "ES256": jwt.encode(claims(), keys.ec, algorithm="ES256"),
        "EdDSA": jwt.encode(claims(), keys.ed, algorithm="EdDSA"),
        "RS256 from the JWK Set": jwt.encode(claims(), keys.jwks_rsa, algorithm="RS256", headers={"kid": "set-1"}),
    }
    for name, token in tokens.items():
        status, headers, body = server.request("POST", "/diff", {"old": [1, 2], "new": [2, 1]}, token=token)
        assert status == 200, (name, body)
        assert "Authorization" in headers["Vary"]


def test_attacks_are_refused(server, keys):
    other_secret = os.urandom(40).hex().encode()
    now = int(time.time())
    header = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()).rstrip(b"=")
    payload = base64.urlsafe_b64encode(json.dumps(claims()).encode()).rstrip(b"=")
    # The RSA public key, as the server holds it, used as an HMAC secret: key-type confusion.
    confused_signature = hmac.new(public_pem(keys.rsa), header + b"." + payload, hashlib.sha256).digest()
    confused = (header + b"." + payload + b"." + base64.urlsafe_b64encode(confused_signature).rstrip(b"=")).decode()
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    attacks = {
        "malformed": "not-a-token",
        "two parts": "abc.def",
        "bad signature": jwt.encode(claims(), other_secret, algorithm="HS256"),
        "alg none": jwt.encode(claims(), None, algorithm="none"),
        "alg none with a signature": jwt.encode(claims(), None, algorithm="none") + "c2ln",
        "RS256 public key as an HS256 secret": confused,
        "unknown kid": jwt.encode(claims(), stranger, algorithm="RS256", headers={"kid": "nobody"}),
        "expired": hs256(keys, exp=now - 120, iat=now - 600),
        "not yet valid": hs256(keys, nbf=now + 600),
        "issued in the future": hs256(keys, iat=now + 600),
        "no exp": hs256(keys, exp=None),
        "wrong iss": hs256(keys, iss="https://elsewhere.example"),
        "wrong aud": hs256(keys, aud="someone-else"),
        "no tenant": hs256(keys, tenant=None),
        "a tenant that is not a name": hs256(keys, tenant="a/b"),
        "HS384 by a known secret": jwt.encode(claims(), keys.secret, algorithm="HS384"),
    }
    log_before = len(server.log_text())
    for name, token in attacks.items():
        body = assert_invalid_token(server, token)
        assert token not in json.dumps(body), name
    log = server.log_text()[log_before:]
    assert log.count("token refused") >= len(attacks)
    for token in attacks.values():
        assert token not in log


def test_only_the_canonical_spelling_of_a_token_is_accepted(server, keys):
    """base64url without padding, in its one spelling (RFC 7515): padding appended, or a last
    character that differs only in bits past the data, is another string for one signature."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    token = hs256(keys)
    assert server.request("POST", "/diff", {"old": [1], "new": [1, 2]}, token=token)[0] == 200
    head, signature = token.rsplit(".", 1)
    unused = {2: 4, 3: 2}[len(signature) % 4]  # bits of the last character past the data
    last = alphabet.index(signature[-1])
    spellings = [token + "=", token + "==", head + "." + signature + "A"] + [
        head + "." + signature[:-1] + alphabet[last ^ flip] for flip in range(1, 1 << unused)]
    payload_head, payload = head.split(".")
    spellings.append(payload_head + "." + payload + "=" + "." + signature)
    for spelling in spellings:
        assert_invalid_token(server, spelling)


def test_a_token_within_the_leeway_is_accepted(server, keys):
    now = int(time.time())
    assert server.request("POST", "/diff", {"old": [1], "new": [2]}, token=hs256(keys, exp=now - 5))[0] == 200


def test_unknown_kids_cause_a_bounded_number_of_key_set_reads(server, keys):
    started = time.time()
    before = server.log_text().count("key set read")
    for index in range(1000):
        token = jwt.encode(claims(), keys.secret, algorithm="HS256", headers={"kid": f"unknown-{index}"})
        # Signed by a known secret under an unknown kid: it verifies; the set is still looked
        # at for the kid, within the floor.
        assert server.request("POST", "/diff", {"old": [1], "new": [2]}, token=token)[0] == 200
    reads = server.log_text().count("key set read") - before
    elapsed = time.time() - started
    assert reads <= 1 + int(elapsed / 10) + 1, (reads, elapsed)


def test_a_key_set_at_an_address_is_fetched_and_read_again_for_a_new_kid(keys, tmp_path):
    """An issuer's jwks_uri: the set is fetched at start; a key published later under a new kid
    is taken up once a token names it, no sooner than 10 s after the last read (the floor), and
    off the request, so tokens are refused until the read is done."""
    import http.server
    import threading

    first = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    later = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    published = {"keys": [jwk(first, "first")]}
    fetches = []

    class Issuer(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            fetches.append(self.path)
            body = json.dumps(published).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *arguments):
            pass

    issuer = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Issuer)
    threading.Thread(target=issuer.serve_forever, daemon=True).start()
    address = f"http://127.0.0.1:{issuer.server_address[1]}/.well-known/jwks.json"
    server = Server(["--auth", "jwt", "--jwks", address], str(tmp_path / "jwks-server.log"))
    try:
        assert len(fetches) == 1
        body = {"old": [1], "new": [2]}
        assert server.request("POST", "/diff", body, token=jwt.encode(claims(), first, algorithm="RS256", headers={"kid": "first"}))[0] == 200
        published["keys"].append(jwk(later, "later"))
        token = jwt.encode(claims(), later, algorithm="RS256", headers={"kid": "later"})
        deadline = time.time() + 15
        while server.request("POST", "/diff", body, token=token)[0] != 200:
            assert time.time() < deadline, "the new key was never taken up"
            time.sleep(0.1)
        assert len(fetches) == 2
        assert server.request("POST", "/diff", body, token=jwt.encode(claims(), later, algorithm="RS256", headers={"kid": "stranger"}))[0] == 401
    finally:
        server.stop()
        issuer.shutdown()


# MARK: - Scopes


def test_each_route_needs_its_scope(server, keys):
    read_only = hs256(keys, scope="sessions:read")
    writer = hs256(keys)
    assert server.request("PUT", "/sessions/scoped", {"items": [1, 2]}, token=writer)[0] == 201
    status, headers, body = server.request("PUT", "/sessions/scoped", {"items": [3]}, token=read_only)
    assert status == 403
    assert body["error"]["code"] == "insufficient_scope"
    assert 'error="insufficient_scope"' in headers["WWW-Authenticate"]
    assert server.request("POST", "/sessions/scoped/update", {"items": [3]}, token=read_only)[0] == 403
    assert server.request("DELETE", "/sessions/scoped", token=read_only)[0] == 403
    assert server.request("GET", "/sessions/scoped", token=read_only)[0] == 200
    assert server.request("POST", "/sessions/scoped/delta", {"items": [2, 1]}, token=read_only)[0] == 200
    assert server.request("POST", "/diff", {"old": [1], "new": [2]}, token=read_only)[0] == 403
    assert server.request("GET", "/sessions/scoped/changes?wait=0", token=read_only)[0] == 403
    assert server.request("GET", "/metrics", token=writer)[0] == 403
    assert server.request("GET", "/metrics", token=hs256(keys, scope="admin"))[0] == 200
    assert server.request("GET", "/sessions/scoped", token=read_only)[2]["items"] == [1, 2]


def test_a_sessions_pattern_limits_the_ids_a_token_reaches(server, keys):
    phone = hs256(keys, sessions=["user-42-*"])
    assert server.request("PUT", "/sessions/user-42-list", {"items": [1]}, token=phone)[0] == 201
    status, _, body = server.request("PUT", "/sessions/user-43-list", {"items": [1]}, token=phone)
    assert status == 403 and body["error"]["code"] == "insufficient_scope"
    assert server.request("GET", "/sessions/user-43-list", token=phone)[0] == 403
    # A random id cannot match the pattern.
    assert server.request("POST", "/sessions", {"items": [1]}, token=phone)[0] == 403


def test_a_replay_runs_the_sessions_check_the_first_request_ran(server, keys):
    """A replayed answer is given only to a token that reaches the session: a user of the same
    tenant whose sessions claim does not reach it gets 403, as without the key."""
    owner = hs256(keys, sessions=["user-1-*"])
    other = hs256(keys, sessions=["user-2-*"])
    assert server.request("PUT", "/sessions/user-1-feed", {"items": [1]}, token=owner)[0] == 201
    headers = {"Idempotency-Key": "replay-scope-1"}
    status, _, first = server.request("POST", "/sessions/user-1-feed/append", {"items": [2]}, token=owner, headers=headers)
    assert status == 200
    status, _, body = server.request("POST", "/sessions/user-1-feed/append", {"items": [2]}, token=other, headers=headers)
    assert status == 403 and body["error"]["code"] == "insufficient_scope", body
    status, answer_headers, again = server.request("POST", "/sessions/user-1-feed/append", {"items": [2]}, token=owner, headers=headers)
    assert status == 200 and again == first and answer_headers["Idempotent-Replayed"] == "true"
    # A created session's replay names it: only a token that reaches that id gets it.
    wide, narrow = hs256(keys, sessions=["*"]), hs256(keys, sessions=["user-3-*"])
    headers = {"Idempotency-Key": "replay-scope-2"}
    status, _, created = server.request("POST", "/sessions", {"items": [1]}, token=wide, headers=headers)
    assert status == 201
    status, _, body = server.request("POST", "/sessions", {"items": [1]}, token=narrow, headers=headers)
    assert status == 403 and created["id"] not in json.dumps(body), body


# MARK: - Live streams


def read_stream(server, path, token=None, cookie=None, until=b"", seconds=10):
    """Opens an event stream and reads it until `until` appears or the stream closes."""
    connection = socket.create_connection(("127.0.0.1", server.port), timeout=seconds)
    head = f"GET {path} HTTP/1.1\r\nHost: x\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    if cookie:
        head += f"Cookie: theme=dark; livedelta_token={cookie}\r\n"
    connection.sendall((head + "\r\n").encode())
    data = b""
    deadline = time.time() + seconds
    while until not in data and time.time() < deadline:
        try:
            chunk = connection.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        data += chunk
    connection.close()
    return data


def test_a_stream_ends_at_its_tokens_expiry_with_an_event(server, keys):
    writer = hs256(keys)
    assert server.request("PUT", "/sessions/expiring", {"items": [1, 2, 3]}, token=writer)[0] == 201
    short = hs256(keys, exp=int(time.time()) + 3)
    started = time.time()
    data = read_stream(server, "/sessions/expiring/events", token=short, until=b"event: expired", seconds=15)
    assert b"event: reset" in data
    assert b"event: expired" in data
    assert b"token_expired" in data
    assert 2 <= time.time() - started <= 8


def test_a_browser_stream_may_carry_its_token_in_a_cookie_and_only_a_stream(server, keys):
    token = hs256(keys)
    assert server.request("PUT", "/sessions/cookied", {"items": [1]}, token=token)[0] == 201
    data = read_stream(server, "/sessions/cookied/events", cookie=token, until=b"event: reset")
    assert data.startswith(b"HTTP/1.1 200")
    assert b"event: reset" in data
    status, _, _ = server.request("PUT", "/sessions/cookied", {"items": [2]}, headers={"Cookie": f"livedelta_token={token}"})
    assert status == 401


# MARK: - Tenants


def tenant_isolation(servers, keys):
    """Two tenants use the same ids through every operation; `servers` may be two replicas."""
    first, second = servers[0], servers[-1]
    a = hs256(keys, tenant="alpha")
    b = hs256(keys, tenant="beta")
    status, headers, body = first.request("PUT", "/sessions/shared", {"items": [1, 2, 3]}, token=a)
    assert status == 201 and body["id"] == "shared"
    assert headers["Location"] == "/sessions/shared"
    # The other tenant sees nothing: 404, never 403.
    status, _, body = second.request("GET", "/sessions/shared", token=b)
    assert status == 404 and body["error"]["code"] == "session_not_found"
    assert "alpha" not in json.dumps(body)
    assert second.request("POST", "/sessions/shared/update", {"items": [9]}, token=b)[0] == 201
    assert second.request("POST", "/sessions/shared/append", {"items": [10]}, token=b)[0] == 200
    assert first.request("POST", "/sessions/shared/update", {"items": [3, 2, 1]}, token=a)[0] == 200
    assert second.request("GET", "/sessions/shared", token=a)[2]["items"] == [3, 2, 1]
    assert first.request("GET", "/sessions/shared", token=b)[2]["items"] == [9, 10]
    # A subscriber of one tenant sees its own session only.
    data = read_stream(second, "/sessions/shared/events", token=b, until=b"event: reset")
    reset = json.loads(data.split(b"event: reset\ndata: ")[1].split(b"\n\n")[0])
    assert reset["items"] == [9, 10] and reset["id"] == "shared"
    status, _, body = first.request("POST", "/sessions", {"items": [7]}, token=a)
    created = body["id"]
    assert second.request("GET", f"/sessions/{created}", token=b)[0] == 404
    assert first.request("DELETE", "/sessions/shared", token=a)[0] == 204
    assert second.request("GET", "/sessions/shared", token=a)[0] == 404
    assert first.request("GET", "/sessions/shared", token=b)[2]["items"] == [9, 10]


def test_tenants_are_apart_in_memory(server, keys):
    tenant_isolation([server], keys)


def test_tenants_are_apart_in_redis_across_two_replicas(keys, redis_url, tmp_path):
    replicas = [Server(keys.flags() + ["--session-store", redis_url], str(tmp_path / f"replica-{n}.log")) for n in range(2)]
    try:
        tenant_isolation(replicas, keys)
    finally:
        for replica in replicas:
            replica.stop()


def test_tenants_are_apart_under_eviction(keys, tmp_path):
    """A tenant that needs room evicts its own least recently used idle session, never
    another tenant's, even when the store as a whole is full."""
    evicting = Server(keys.flags() + ["--max-sessions", "2"], str(tmp_path / "evicting.log"))
    try:
        a, b = hs256(keys, tenant="alpha"), hs256(keys, tenant="beta")
        assert evicting.request("PUT", "/sessions/one", {"items": [1]}, token=a)[0] == 201
        assert evicting.request("PUT", "/sessions/one", {"items": [2]}, token=b)[0] == 201
        # The store is full: beta's second session takes the place of beta's first.
        assert evicting.request("PUT", "/sessions/two", {"items": [3]}, token=b)[0] == 201
        assert evicting.request("GET", "/sessions/one", token=a)[2]["items"] == [1]
        assert evicting.request("GET", "/sessions/one", token=b)[0] == 404
        assert evicting.request("GET", "/sessions/two", token=b)[2]["items"] == [3]
    finally:
        evicting.stop()


def test_one_tenant_filling_its_quotas_leaves_the_others_untouched(keys, tmp_path):
    """Per-tenant quotas: sessions (evicted within the tenant), subscribers (429 naming the
    flag); the other tenant's sessions and streams are served as before."""
    server = Server(keys.flags() + ["--max-sessions-per-tenant", "3", "--max-subscribers-per-tenant", "2"], str(tmp_path / "quota.log"))
    try:
        a, b = hs256(keys, tenant="alpha"), hs256(keys, tenant="beta")
        for name in ("b1", "b2"):
            assert server.request("PUT", f"/sessions/{name}", {"items": [1]}, token=b)[0] == 201
        for n in range(10):
            assert server.request("PUT", f"/sessions/a{n}", {"items": [n]}, token=a)[0] == 201
        # Alpha keeps its three most recent; beta's are untouched.
        assert [server.request("GET", f"/sessions/a{n}", token=a)[0] for n in range(10)] == [404] * 7 + [200] * 3
        assert all(server.request("GET", f"/sessions/{name}", token=b)[0] == 200 for name in ("b1", "b2"))
        assert "session evicted" in server.log_text()
        # Subscribers: alpha's third is refused, naming the flag; beta's are served.
        held = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(2)]
        for connection in held:
            connection.sendall(f"GET /sessions/a9/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {a}\r\n\r\n".encode())
            assert connection.recv(65536).startswith(b"HTTP/1.1 200")
        status, headers, body = server.request("GET", "/sessions/a9/changes?wait=0", token=a)
        assert status == 429 and body["error"]["code"] == "quota_exceeded", body
        assert "--max-subscribers-per-tenant" in body["error"]["message"] and body["error"]["limit"] == "max-subscribers-per-tenant"
        assert headers["Retry-After"]
        assert b"event: reset" in read_stream(server, "/sessions/b1/events", token=b, until=b"event: reset")
        for connection in held:
            connection.close()
        # Closed streams give their places back at once.
        deadline = time.time() + 5
        while server.request("GET", "/sessions/a9/changes?wait=0", token=a)[0] != 200:
            assert time.time() < deadline
            time.sleep(0.05)
    finally:
        server.stop()


def redis_command(url, *words):
    """One command to the Redis at `url`, its reply's first line (enough for the tests' CONFIG SET)."""
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=10) as connection:
        connection.sendall((f"*{len(words)}\r\n" + "".join(f"${len(w.encode())}\r\n{w}\r\n" for w in words)).encode())
        return connection.recv(4096).split(b"\r\n")[0]


def test_tenant_quotas_hold_on_redis_across_two_replicas(keys, shared_store, tmp_path):
    """Quotas counted in Redis in the step that commits: a tenant writing through two replicas
    at once gets exactly its quota of sessions and bytes, then 429 naming the limit; the other
    tenant's sessions stay; a delete, and an expiry, give a place back."""
    flags = keys.flags() + ["--session-store", shared_store, "--session-key-prefix", "quota-test:",
                            "--max-sessions-per-tenant", "5", "--max-session-bytes-per-tenant", "200000"]
    replicas = [Server(flags, str(tmp_path / f"quota-{n}.log")) for n in range(2)]
    try:
        x, v = hs256(keys, tenant="x"), hs256(keys, tenant="v")
        assert replicas[0].request("PUT", "/sessions/kept", {"items": [1, 2, 3]}, token=v)[0] == 201
        results = [None] * 24

        def create(n):
            results[n] = replicas[n % 2].request("PUT", f"/sessions/s{n}", {"items": [n]}, token=x)

        threads = [threading.Thread(target=create, args=(n,)) for n in range(24)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(status for status, _, _ in results) == [201] * 5 + [429] * 19, [r[0] for r in results]
        refused = next(body for status, _, body in results if status == 429)
        assert refused["error"]["code"] == "quota_exceeded" and refused["error"]["limit"] == "max-sessions-per-tenant", refused
        assert "--max-sessions-per-tenant" in refused["error"]["message"]
        # The other tenant is untouched, and has its own five.
        assert replicas[1].request("GET", "/sessions/kept", token=v)[2]["items"] == [1, 2, 3]
        for n in range(4):
            assert replicas[n % 2].request("PUT", f"/sessions/v{n}", {"items": [n]}, token=v)[0] == 201
        # Replacing one of its own sessions needs no new place; a delete gives one back.
        held = [n for n, (status, _, _) in enumerate(results) if status == 201]
        assert replicas[1].request("PUT", f"/sessions/s{held[0]}", {"items": [7, 8]}, token=x)[0] == 200
        assert replicas[0].request("PUT", "/sessions/extra", {"items": [1]}, token=x)[0] == 429
        assert replicas[0].request("DELETE", f"/sessions/s{held[0]}", token=x)[0] == 204
        assert replicas[1].request("PUT", "/sessions/extra", {"items": [1]}, token=x)[0] == 201
        # Bytes: growing a session past the tenant's bytes is refused, naming that limit, and
        # leaves the session as it was; shrinking is never refused.
        big = {"items": [{"id": n, "text": "x" * 1000} for n in range(120)]}
        assert replicas[0].request("POST", f"/sessions/s{held[1]}/update", big, token=x)[0] == 200
        status, _, body = replicas[1].request("POST", f"/sessions/s{held[2]}/update", big, token=x)
        assert status == 429 and body["error"]["limit"] == "max-session-bytes-per-tenant", body
        assert replicas[1].request("GET", f"/sessions/s{held[2]}", token=x)[2]["items"] == [held[2]]
        assert replicas[1].request("POST", f"/sessions/s{held[1]}/update", {"items": [1]}, token=x)[0] == 200
        assert replicas[0].request("POST", f"/sessions/s{held[2]}/update", big, token=x)[0] == 200
    finally:
        for replica in replicas:
            replica.stop()


def test_expired_sessions_give_their_places_back_on_redis(keys, shared_store, tmp_path):
    """Redis drops idle sessions without a word: a tenant at its quota gets a place again once
    its sessions have expired, without deleting them."""
    flags = keys.flags() + ["--session-store", shared_store, "--session-key-prefix", "expiry-test:",
                            "--max-sessions-per-tenant", "2", "--session-idle-timeout", "1"]
    server = Server(flags, str(tmp_path / "expiry.log"))
    try:
        token = hs256(keys, tenant="brief")
        for name in ("one", "two"):
            assert server.request("PUT", f"/sessions/{name}", {"items": [1]}, token=token)[0] == 201
        assert server.request("PUT", "/sessions/three", {"items": [1]}, token=token)[0] == 429
        # Each try reads neither of the others, so they expire; wait for that, not for a time.
        deadline = time.monotonic() + 30
        while server.request("PUT", "/sessions/three", {"items": [1]}, token=token)[0] != 201:
            assert time.monotonic() < deadline, "the expired sessions never gave their places back"
            time.sleep(0.2)
    finally:
        server.stop()


def test_a_redis_that_may_evict_sessions_is_warned_of(keys, redis_url, tmp_path):
    assert redis_command(redis_url, "CONFIG", "SET", "maxmemory", "1gb") == b"+OK"
    assert redis_command(redis_url, "CONFIG", "SET", "maxmemory-policy", "volatile-lru") == b"+OK"
    try:
        server = Server(keys.flags() + ["--session-store", redis_url], str(tmp_path / "evicting.log"))
        server.stop()
        log = open(str(tmp_path / "evicting.log")).read()
        assert "Redis may evict sessions of any tenant" in log and "volatile-lru" in log, log
    finally:
        redis_command(redis_url, "CONFIG", "SET", "maxmemory", "0")
        redis_command(redis_url, "CONFIG", "SET", "maxmemory-policy", "noeviction")
    server = Server(keys.flags() + ["--session-store", redis_url], str(tmp_path / "quiet.log"))
    server.stop()
    assert "Redis may evict" not in open(str(tmp_path / "quiet.log")).read()


def test_a_key_removed_from_the_set_refuses_its_tokens_at_the_next_read(keys, tmp_path):
    """The acceptance cache dies with the key: once the set is read without the key, a token
    it accepted before is refused, remembered or not."""
    jwks_path = tmp_path / "rotating.json"
    kept = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    removed = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwks_path.write_text(json.dumps({"keys": [jwk(kept, "kept"), jwk(removed, "removed")]}))
    server = Server(["--auth", "jwt", "--jwks", str(jwks_path), "--jwks-refresh", "10"], str(tmp_path / "rotating.log"))
    try:
        body = {"old": [1], "new": [2]}
        doomed = jwt.encode(claims(), removed, algorithm="RS256", headers={"kid": "removed"})
        staying = jwt.encode(claims(), kept, algorithm="RS256", headers={"kid": "kept"})
        assert server.request("POST", "/diff", body, token=doomed)[0] == 200
        assert server.request("POST", "/diff", body, token=staying)[0] == 200
        jwks_path.write_text(json.dumps({"keys": [jwk(kept, "kept")]}))
        deadline = time.time() + 25
        while server.request("POST", "/diff", body, token=doomed)[0] != 401:
            assert time.time() < deadline, "a token of the removed key is still accepted"
            time.sleep(0.2)
        assert server.request("POST", "/diff", body, token=staying)[0] == 200
    finally:
        server.stop()


def test_a_token_may_not_live_longer_than_the_limit(keys, tmp_path):
    server = Server(keys.flags() + ["--jwt-max-lifetime", "600"], str(tmp_path / "lifetime.log"))
    try:
        now = int(time.time())
        body = {"old": [1], "new": [2]}
        assert server.request("POST", "/diff", body, token=hs256(keys, exp=now + 500))[0] == 200
        assert_invalid_token(server, hs256(keys, exp=now + 7200))
        assert_invalid_token(server, hs256(keys, iat=now - 3000, exp=now + 60))
        assert_invalid_token(server, hs256(keys, iat=None, exp=now + 100_000))
        assert "past the 600 s" in server.log_text()
    finally:
        server.stop()


def test_a_forged_log_line_cannot_be_written(server, keys):
    """Values from requests and tokens are escaped in the text log: one request, one line."""
    forged = "2026-01-01T00:00:00.000Z critical FORGED"
    header = {"alg": f"HS256\n{forged}", "typ": "JWT", "kid": f"k\r\n{forged}"}
    encode = lambda value: base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    token = f"{encode(header)}.{encode(claims())}.c2lnbmF0dXJl"
    before = len(server.log_text())
    assert_invalid_token(server, token)
    server.request("GET", "/x%0A2026-01-01T00:00:00.000Z%20critical%20FORGED", token=hs256(keys))
    log = server.log_text()[before:]
    assert "FORGED" in log
    assert not any(line.startswith(forged) for line in log.splitlines()), log


def test_nothing_of_a_token_reaches_the_log(server, keys):
    token = hs256(keys)
    server.request("GET", "/sessions/none-such", token=token)
    assert token not in server.log_text()
    assert re.search(r"eyJ[A-Za-z0-9_-]{10,}\.", server.log_text()) is None
