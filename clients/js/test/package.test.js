// The package as a user gets it: its exports resolve by name, every export of each module is
// declared in its .d.ts, the declarations compile with a program using them (tsc, where Debian's
// node-typescript is installed), the installs the docs name work (an npm pack tarball, a path),
// and the server serves the very files of this folder.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

function hasNpm() {
  try {
    execFileSync("npm", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

// An app installs the package as docs/clients.md says, offline (it has no dependencies), and
// imports both modules by name; with tsc, a TypeScript app type-checks against it.
for (const route of ["a tarball from npm pack", "a path"]) {
  test(`installed from ${route}, as the docs say`, { skip: !hasNpm() && "npm is not installed (apt install npm)" }, () => {
    const scratch = mkdtempSync(join(tmpdir(), "livedelta-install-"));
    try {
      const app = join(scratch, "app");
      execFileSync("mkdir", [app]);
      writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
      const npm = (args, cwd) => execFileSync("npm", [...args, "--offline", "--no-audit", "--no-fund"], { cwd, stdio: "pipe", encoding: "utf8" });
      let source = folder;
      if (route.includes("tarball")) {
        const [packed] = JSON.parse(npm(["pack", "--json", "--pack-destination", scratch], folder));
        assert.deepEqual(packed.files.map((file) => file.path).sort(), [...JSON.parse(readFileSync(join(folder, "package.json"), "utf8")).files, "package.json"].sort());
        source = join(scratch, packed.filename);
      }
      npm(["install", source], app);
      writeFileSync(join(app, "main.js"), [
        'import { LiveDeltaClient, LiveArray } from "livedelta";',
        'import { LiveList } from "livedelta/dom";',
        'console.log(typeof LiveDeltaClient, typeof LiveArray, typeof LiveList);',
      ].join("\n"));
      assert.equal(execFileSync("node", ["main.js"], { cwd: app, encoding: "utf8" }).trim(), "function function function");
      if (hasTypeScript()) {
        writeFileSync(join(app, "main.ts"), [
          'import { LiveDeltaClient } from "livedelta";',
          'import type { LiveList } from "livedelta/dom";',
          'const client: LiveDeltaClient = new LiveDeltaClient("http://localhost:8080");',
          'export const follow = (list: LiveList) => [client, list];',
        ].join("\n"));
        execFileSync("tsc", ["--strict", "--noEmit", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022", "--lib", "es2022,dom", "main.ts"], { cwd: app, stdio: "pipe" });
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
}
