"""make bench-auth: what checking bearer tokens costs, on this machine.

1. In process (TokenBenchmark): one token of each algorithm (HS256, ES256, RS256, EdDSA) checked
   in full (signature and claims) and remembered (the cache of accepted tokens).
2. Over HTTP with wrk: POST /diff of 20 items a side, without tokens (--auth none) and with
   each algorithm's token on every request (as a client sends it: the same token each time,
   so after its first request it is remembered). The cost of checking is measured against the
   same requests sent to --auth none, header included: a token's 200-odd bytes cost wrk and
   libmicrohttpd something of their own. Prints requests/s and the share lost.
Keys and tokens are made here with cryptography and PyJWT. Figures only; nothing is asserted.
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

release = sys.argv[1] if len(sys.argv) > 1 else ".build/release"
sys.stdout.reconfigure(line_buffering=True)
work = tempfile.mkdtemp()


def write(name, content):
    path = os.path.join(work, name)
    with open(path, "wb") as f:
        f.write(content)
    return path


def public_pem(key):
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


secret = os.urandom(32).hex().encode()
keys = {"HS256": secret, "ES256": ec.generate_private_key(ec.SECP256R1()),
        "RS256": rsa.generate_private_key(public_exponent=65537, key_size=2048), "EdDSA": ed25519.Ed25519PrivateKey.generate()}
claims = {"tenant": "bench", "scope": "diff sessions:read sessions:write", "exp": int(time.time()) + 3600, "iat": int(time.time())}
tokens, key_files = {}, {}
for algorithm, key in keys.items():
    tokens[algorithm] = jwt.encode(claims, key, algorithm=algorithm)
    key_files[algorithm] = write(algorithm + ".key", key if algorithm == "HS256" else public_pem(key))
token_files = {algorithm: write(algorithm + ".token", token.encode()) for algorithm, token in tokens.items()}

print("Token checks in process:")
arguments = []
for algorithm in keys:
    arguments += [algorithm, "secret" if algorithm == "HS256" else "pem", key_files[algorithm], token_files[algorithm]]
subprocess.run([os.path.join(release, "TokenBenchmark"), *arguments], check=True)

body = write("small.json", json.dumps({"old": [{"id": i, "title": f"Movie {i}"} for i in range(20)],
                                       "new": [{"id": i, "title": f"Movie {i}" + (" (edited)" if i % 7 == 0 else "")} for i in [*range(1, 20), 0]]}).encode())
lua = write("post.lua", b"""
local file = assert(io.open(os.getenv("BODY"), "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/json"
local token = os.getenv("TOKEN")
if token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end
""")


def serve(flags):
    log = open(os.path.join(work, f"server-{len(flags)}.log"), "w")
    process = subprocess.Popen([os.path.join(release, "livedelta"), "--host", "127.0.0.1", "--port", "0", "--log-level", "notice", *flags],
                               stdout=log, stderr=subprocess.STDOUT)
    for _ in range(200):
        text = open(log.name).read()
        found = re.search(r"port=(\d+)", text)
        if found:
            return process, int(found.group(1))
        time.sleep(0.05)
    raise SystemExit("the server did not start: " + open(log.name).read())


def requests_per_second(port, token):
    output = subprocess.run(["wrk", "-t1", "-c32", "-d5s", "-s", lua, f"http://127.0.0.1:{port}/diff"],
                            env={**os.environ, "BODY": body, "TOKEN": token}, capture_output=True, text=True, check=True).stdout
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if non_2xx:
        raise SystemExit(f"{non_2xx.group(1)} requests were refused:\n{output}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


print("POST /diff, 20 items a side, wrk with 32 connections, 5 s a run, 3 rounds alternating (median; on the server's cores):")
open_server, open_port = serve([])
flags = ["--auth", "jwt", "--jwt-secret-file", key_files["HS256"]]
for algorithm in ["ES256", "RS256", "EdDSA"]:
    flags += ["--jwt-public-key-file", key_files[algorithm]]
checking_server, checking_port = serve(flags)
rates = {name: [] for name in ["none", "header", *keys]}
for _ in range(3):
    rates["none"].append(requests_per_second(open_port, ""))
    # The same request with a token's header, which nobody checks: what the bytes cost.
    rates["header"].append(requests_per_second(open_port, tokens["HS256"]))
    for algorithm in keys:
        rates[algorithm].append(requests_per_second(checking_port, tokens[algorithm]))
for process in (open_server, checking_server):
    process.terminate()
    process.wait()
print(f"  --auth none, no Authorization header: {statistics.median(rates['none']):,.0f} requests/s"
      f" (runs: {', '.join(f'{r:,.0f}' for r in rates['none'])})")
baseline = statistics.median(rates["header"])
print(f"  --auth none, the same requests with the token's header, unchecked: {baseline:,.0f} requests/s"
      f" (runs: {', '.join(f'{r:,.0f}' for r in rates['header'])}); the checks below against this")
for algorithm in keys:
    rate = statistics.median(rates[algorithm])
    change = (rate - baseline) / baseline * 100
    print(f"  {algorithm} token on every request: {rate:,.0f} requests/s, {abs(change):.1f}% {'fewer' if change < 0 else 'more'}"
          f" (runs: {', '.join(f'{r:,.0f}' for r in rates[algorithm])})")
