// What the tests share: the real binary started on a free port (LIVEDELTA_BINARY, or the
// repository's debug build), a throwaway redis-server, HS256 tokens, and waiting.
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { createServer, connect } from "node:net";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
export const binary = process.env.LIVEDELTA_BINARY ?? join(root, ".build", "debug", "livedelta");

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `condition()` is true (polling), or fails naming `what` (or what `what()` says then). */
export async function until(condition, what, ms = 20000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await sleep(10);
  }
  throw new Error(`waited ${ms} ms for ${typeof what === "function" ? what() : what}`);
}

async function listening(port) {
  for (let i = 0; i < 400; i++) {
    const open = await new Promise((resolve) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
    if (open) return;
    await sleep(25);
  }
  throw new Error(`nothing listens on ${port}`);
}

/** The real binary with `flags`, on `port` (a free one by default); `stop()` ends it. */
export async function startServer(flags = [], port) {
  port ??= await freePort();
  const output = [];
  const child = spawn(binary, ["--host", "127.0.0.1", "--port", String(port), "--log-level", "warning", ...flags], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (chunk) => output.push(chunk));
  child.stderr.on("data", (chunk) => output.push(chunk));
  const exited = new Promise((resolve) => child.on("exit", resolve));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      if (child.exitCode !== null || i > 400) throw new Error(`livedelta did not start: ${Buffer.concat(output)}`);
      await sleep(25);
    }
  }
  return {
    url, port, flags,
    log: () => Buffer.concat(output).toString(),
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A redis-server that keeps nothing on disk; `url` for --session-store, `stop()`. */
export async function startRedis() {
  const port = await freePort();
  const directory = mkdtempSync(join(tmpdir(), "livedelta-redis-"));
  const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory], {
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  await listening(port);
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGTERM");
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A file holding a new HS256 secret, for --jwt-secret-file; `remove()` deletes it. */
export function secretFile() {
  const directory = mkdtempSync(join(tmpdir(), "livedelta-secret-"));
  const secret = `${Math.random().toString(36).slice(2)}${"k".repeat(40)}`;
  const path = join(directory, "secret");
  writeFileSync(path, secret);
  return { path, secret, remove: () => rmSync(directory, { recursive: true, force: true }) };
}

const base64url = (value) => Buffer.from(value).toString("base64url");

/** An HS256 JWT with `claims` (an hour's life unless given). */
export function mintToken(secret, claims = {}) {
  const now = Math.floor(Date.now() / 1000);
  const header = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));
  const body = base64url(JSON.stringify({ sub: "test", iat: now, exp: now + 3600, scope: "diff sessions:read sessions:write sessions:subscribe", ...claims }));
  const signature = createHmac("sha256", secret).update(`${header}.${body}`).digest("base64url");
  return `${header}.${body}.${signature}`;
}

/** A fetch that records each request's method, URL and headers in `calls`. */
export function recordingFetch(calls, inner = globalThis.fetch) {
  return (url, init = {}) => {
    calls.push({ url: String(url), method: init.method ?? "GET", headers: { ...(init.headers ?? {}) } });
    return inner(url, init);
  };
}
