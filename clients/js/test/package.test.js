// The package as a user gets it: its exports resolve by name, every export of each module is
// declared in its .d.ts, the declarations compile with a program using them (tsc, where Debian's
// node-typescript is installed), and the server serves the very files of this folder.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import { startServer } from "./support.js";

const folder = join(dirname(fileURLToPath(import.meta.url)), "..");

function declared(file) {
  const text = readFileSync(join(folder, file), "utf8");
  return new Set([...text.matchAll(/^export (?:declare )?(?:class|function|const|let) (\w+)/gm)].map((match) => match[1]));
}

for (const [specifier, declarations] of [["livedelta", "livedelta.d.ts"], ["livedelta/dom", "dom.d.ts"]]) {
  test(`${specifier}: every export is declared in ${declarations}`, async () => {
    const module = await import(specifier);
    const names = new Set(Object.keys(module));
    assert.deepEqual([...names].sort(), [...declared(declarations)].sort());
  });
}

test("package.json names the modules and their types, the repository's license, and no dependencies", () => {
  const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
  assert.equal(manifest.name, "livedelta");
  // The repository is MIT (its LICENSE); the package says so, as npm and license checkers read it.
  assert.match(readFileSync(join(folder, "..", "..", "LICENSE"), "utf8"), /^MIT License/);
  assert.equal(manifest.license, "MIT");
  assert.equal(manifest.type, "module");
  assert.equal(manifest.dependencies, undefined);
  for (const entry of Object.values(manifest.exports)) {
    if (typeof entry === "string") continue;
    readFileSync(join(folder, entry.types));
    readFileSync(join(folder, entry.default));
  }
});

function hasTypeScript() {
  try {
    execFileSync("tsc", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

test("the declarations compile with a program that uses them (tsc --strict)", { skip: !hasTypeScript() && "tsc is not installed (apt install node-typescript)" }, () => {
  execFileSync("tsc", ["-p", join(folder, "test", "tsconfig.json")], { stdio: "pipe" });
});

test("the server serves this folder's modules as they are", async () => {
  const server = await startServer();
  try {
    for (const file of ["livedelta.js", "appliers.js", "dom.js"]) {
      const answer = await fetch(`${server.url}/clients/${file}`);
      assert.equal(answer.headers.get("Content-Type"), "text/javascript; charset=utf-8");
      assert.equal(await answer.text(), readFileSync(join(folder, file), "utf8"), `${file}: rebuild the server to embed it again`);
    }
  } finally {
    await server.stop();
  }
});
