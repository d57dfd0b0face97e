import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { sectionValue, serverSettingKeys, serverSettings } from "../src/settings";
import { FakeConfiguration } from "./fakeVscode";
import { declaredDefaults, packageJson } from "./packageJson";

const keys = serverSettingKeys(packageJson);

describe("serverSettingKeys", () => {
  it("lists the declared settings the server reads, not the extension's own", () => {
    assert.ok(keys.includes("enable"));
    assert.ok(keys.includes("debounceMs"));
    for (const key of ["backend.backend", "backend.url", "backend.model", "completion.alpha"]) {
      assert.ok(keys.includes(key), key);
    }
    assert.ok(keys.includes("completion.iterations"));
    assert.ok(!keys.includes("serverPath"));
    assert.ok(!keys.includes("trace.server"));
  });

  it("puts every server setting in a section the server knows", () => {
    for (const key of keys) {
      const parts = key.split(".");
      if (parts.length === 1) {
        assert.ok(["enable", "debounceMs", "indexDelayMs"].includes(key), key);
      } else {
        assert.equal(parts.length, 2, key);
        assert.ok(["backend", "completion", "index"].includes(parts[0]), key);
      }
    }
  });
});

describe("serverSettings", () => {
  it("sends nothing when nothing is set, so the repository's own settings apply", () => {
    assert.deepEqual(serverSettings(new FakeConfiguration(declaredDefaults), keys), {});
  });

  it("nests the values a user set by section", () => {
    const config = new FakeConfiguration(declaredDefaults, {
      global: {
        enable: false,
        "backend.backend": "openai",
        "backend.url": "http://gpu-box:8000/v1",
        "completion.alpha": 0.25,
        "completion.iterations": 1,
        "index.ignorePatterns": ["vendor/**"],
      },
    });
    assert.deepEqual(serverSettings(config, keys), {
      enable: false,
      backend: { backend: "openai", url: "http://gpu-box:8000/v1" },
      completion: { alpha: 0.25, iterations: 1 },
      index: { ignorePatterns: ["vendor/**"] },
    });
  });

  it("lets a folder value beat a workspace value beat a user value", () => {
    const config = new FakeConfiguration(declaredDefaults, {
      global: { "completion.k": 3, "completion.alpha": 0.1, "backend.timeout": 5 },
      workspace: { "completion.k": 4, "completion.alpha": 0.2 },
      workspaceFolder: { "completion.k": 5 },
    });
    assert.deepEqual(serverSettings(config, keys), {
      backend: { timeout: 5 },
      completion: { k: 5, alpha: 0.2 },
    });
  });

  it("forwards an explicit null, which asks the server for its automatic choice", () => {
    const config = new FakeConfiguration(declaredDefaults, {
      global: { "backend.model": "/models/a" },
      workspace: { "backend.model": null },
    });
    assert.deepEqual(serverSettings(config, keys), { backend: { model: null } });
  });

  it("never sends the extension's own settings", () => {
    const config = new FakeConfiguration(declaredDefaults, {
      global: { serverPath: "/opt/repomem/bin/repomem", "trace.server": "verbose" },
    });
    assert.deepEqual(serverSettings(config, keys), {});
  });

  it("ignores settings that package.json does not declare", () => {
    const config = new FakeConfiguration(declaredDefaults, {
      global: { "completion.typo": 3, "completion.k": 2 },
    });
    assert.deepEqual(serverSettings(config, keys), { completion: { k: 2 } });
  });
});

describe("sectionValue", () => {
  const settings = { enable: true, backend: { backend: "openai" } };

  it("answers workspace/configuration for the whole section and below it", () => {
    assert.deepEqual(sectionValue(settings, "repomem"), settings);
    assert.deepEqual(sectionValue(settings, "repomem.backend"), { backend: "openai" });
    assert.equal(sectionValue(settings, "repomem.backend.backend"), "openai");
  });

  it("answers null for what is unset or not repomem's", () => {
    assert.equal(sectionValue(settings, "repomem.completion"), null);
    assert.equal(sectionValue(settings, "repomem.backend.backend.deeper"), null);
    assert.equal(sectionValue(settings, "editor"), null);
    assert.equal(sectionValue(settings, "repomemx"), null);
  });
});
