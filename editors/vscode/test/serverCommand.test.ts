import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Environment, resolveServerCommand, ServerNotFoundError } from "../src/serverCommand";

function posix(executables: string[], overrides: Partial<Environment> = {}): Environment {
  const present = new Set(executables);
  return {
    platform: "linux",
    env: { PATH: "/usr/local/bin:/usr/bin" },
    home: "/home/ada",
    workspaceFolder: "/work/project",
    isExecutable: (file) => present.has(file),
    ...overrides,
  };
}

describe("resolveServerCommand", () => {
  it("runs `serve` of the first repomem on PATH by default", () => {
    const env = posix(["/usr/bin/repomem", "/work/project/.venv/bin/repomem"]);
    for (const setting of [undefined, "", "  ", "repomem"]) {
      assert.deepEqual(resolveServerCommand(setting, env), {
        command: "/usr/bin/repomem",
        args: ["serve"],
      });
    }
  });

  it("falls back to the workspace's .venv, then venv", () => {
    assert.equal(
      resolveServerCommand(undefined, posix(["/work/project/.venv/bin/repomem"])).command,
      "/work/project/.venv/bin/repomem",
    );
    assert.equal(
      resolveServerCommand(undefined, posix(["/work/project/venv/bin/repomem"])).command,
      "/work/project/venv/bin/repomem",
    );
  });

  it("expands ~ and ${workspaceFolder}, and resolves relative paths in the folder", () => {
    const env = posix(["/home/ada/tools/repomem", "/work/project/env/bin/repomem"]);
    assert.equal(resolveServerCommand("~/tools/repomem", env).command, "/home/ada/tools/repomem");
    assert.equal(
      resolveServerCommand("${workspaceFolder}/env/bin/repomem", env).command,
      "/work/project/env/bin/repomem",
    );
    assert.equal(
      resolveServerCommand("env/bin/repomem", env).command,
      "/work/project/env/bin/repomem",
    );
  });

  it("says which setting to change when nothing is found", () => {
    assert.throws(
      () => resolveServerCommand(undefined, posix([])),
      (error: unknown) =>
        error instanceof ServerNotFoundError &&
        error.message.includes("repomem.serverPath") &&
        error.message.includes("PATH, .venv or venv"),
    );
    assert.throws(
      () => resolveServerCommand("/opt/missing/repomem", posix([])),
      (error: unknown) =>
        error instanceof ServerNotFoundError &&
        error.message.includes('"/opt/missing/repomem" is not an executable file'),
    );
  });

  it("refuses folder-relative settings when no folder is open", () => {
    const env = posix(["/usr/bin/repomem"], { workspaceFolder: undefined });
    assert.throws(() => resolveServerCommand("env/bin/repomem", env), /no folder is open/);
    assert.throws(() => resolveServerCommand("${workspaceFolder}/repomem", env), /no folder/);
    assert.equal(resolveServerCommand(undefined, env).command, "/usr/bin/repomem");
  });

  it("finds pip's repomem.exe on Windows", () => {
    const env: Environment = {
      platform: "win32",
      env: { Path: "C:\\Python\\Scripts;C:\\Windows", PATHEXT: ".COM;.EXE" },
      home: "C:\\Users\\ada",
      workspaceFolder: "C:\\src\\project",
      isExecutable: (file) => file === "C:\\src\\project\\.venv\\Scripts\\repomem.exe",
    };
    assert.equal(
      resolveServerCommand(undefined, env).command,
      "C:\\src\\project\\.venv\\Scripts\\repomem.exe",
    );
  });
});
