/**
 * The real `repomem serve`, driven over stdio with the extension's client options (settings,
 * workspace/configuration answers, progress middleware) and its status machine.
 */
import * as assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import type { OutputChannel } from "vscode";
import type { Middleware } from "vscode-languageclient/node";
import {
  CompletionRequest,
  ConfigurationRequest,
  createProtocolConnection,
  DidChangeConfigurationNotification,
  DidOpenTextDocumentNotification,
  InitializedNotification,
  InitializeRequest,
  InlineCompletionRequest,
  InlineCompletionTriggerKind,
  MessageType,
  type ProtocolConnection,
  ShowMessageNotification,
  type ShowMessageParams,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
} from "vscode-languageserver-protocol/node";
import { clientOptions } from "../src/clientOptions";
import {
  processEnvironment,
  resolveServerCommand,
  type ServerCommand,
} from "../src/serverCommand";
import { serverSettingKeys, serverSettings } from "../src/settings";
import { INDEX_READY, IndexStatus, type StatusView } from "../src/status";
import { FakeConfiguration } from "./fakeVscode";
import { declaredDefaults, packageJson } from "./packageJson";

const READY_TIMEOUT_MS = 60_000;

const FILES: Record<string, string> = {
  "pkg/__init__.py": "",
  "pkg/util.py": "def helper(x):\n    total = x + 1\n    return total * 2\n",
  "pkg/config.py": [
    "from pkg.util import helper",
    "",
    "",
    "def connect(settings):",
    "    client = make_client(settings.host, settings.port, timeout=settings.timeout)",
    "    return client",
    "",
  ].join("\n"),
  "pkg/app.py": "def run(opts):\n    pass\n",
  // the fixture's one copy is a weak one: shown whatever its confidence
  ".repomem.toml": "[completion]\nmin_confidence = 0\n",
};
// typed in pkg/app.py: the rest of the line is in pkg/config.py, copied with run()'s own
// parameter in place of connect()'s
const TYPED = "def run(opts):\n    client = make_client(";
const EXPECTED = "opts.host, opts.port, timeout=opts.timeout)";

/** The server command, found the way the extension finds it (the checkout as the folder). */
function findServer(): ServerCommand | undefined {
  try {
    return resolveServerCommand(undefined, processEnvironment(path.resolve(__dirname, "../../../..")));
  } catch {
    return undefined;
  }
}

const server = findServer();

function until<T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      const value = probe();
      if (value !== undefined) {
        resolve(value);
      } else if (Date.now() - started > timeoutMs) {
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      } else {
        setTimeout(poll, 20);
      }
    };
    poll();
  });
}

describe("repomem serve with the extension's client options", {
  timeout: 2 * READY_TIMEOUT_MS,
  skip: server === undefined ? "no repomem executable on PATH or in the checkout's .venv" : false,
}, () => {
  let root: string;
  let child: ChildProcess;
  let connection: ProtocolConnection;
  let serverLog = "";
  const views: StatusView[] = [];
  const messages: ShowMessageParams[] = [];
  const status = new IndexStatus((view) => views.push(view));
  // every declared setting, set explicitly to the default package.json shows for it
  const settings = serverSettings(
    new FakeConfiguration(declaredDefaults, { global: declaredDefaults }),
    serverSettingKeys(packageJson),
  );
  const options = clientOptions(status, () => settings, {} as OutputChannel);
  const middleware = options.middleware as Middleware;
  const uri = (rel: string) => `file://${path.join(root, rel)}`;

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "repomem-vscode-"));
    for (const [rel, text] of Object.entries(FILES)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    }
    // a folder outside git (as an unpacked tarball is) is indexed as it is: the folder is the root
    assert.ok(!fs.existsSync(path.join(root, ".git")));
    assert.ok(server);
    child = spawn(server.command, server.args, { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    child.stderr!.on("data", (chunk: Buffer) => {
      serverLog += chunk.toString();
    });
    connection = createProtocolConnection(
      new StreamMessageReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    connection.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      connection.onProgress(WorkDoneProgress.type, token, (value) =>
        middleware.handleWorkDoneProgress!(token, value, () => undefined),
      );
      return null;
    });
    connection.onRequest(ConfigurationRequest.type, (params, token) =>
      middleware.workspace!.configuration!(params, token, () => []),
    );
    connection.onNotification(INDEX_READY, (params) => status.indexReady(params));
    connection.onNotification(ShowMessageNotification.type, (params) => messages.push(params));
    connection.listen();

    status.starting();
    const initializationOptions = (options.initializationOptions as () => unknown)();
    const result = await connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: `file://${root}`,
      workspaceFolders: [{ uri: `file://${root}`, name: "fixture" }],
      initializationOptions,
      capabilities: {
        window: { workDoneProgress: true },
        workspace: { configuration: true },
        textDocument: { completion: { completionItem: {} }, inlineCompletion: {} },
      },
    });
    assert.ok(result.capabilities.completionProvider);
    assert.ok(result.capabilities.inlineCompletionProvider);
    // vscode-languageclient sends the folders added later only to a server that asks for them
    assert.deepEqual(result.capabilities.workspace?.workspaceFolders, {
      supported: true,
      changeNotifications: true,
    });
    await connection.sendNotification(InitializedNotification.type, {});
    status.running();
  });

  after(async () => {
    connection?.dispose();
    child?.kill();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("accepts every setting the extension declares, with its default", async () => {
    const ready = () => (status.view().text === "$(check) repomem" ? true : undefined);
    await until("repomem/indexReady", ready, READY_TIMEOUT_MS).catch((error: Error) => {
      throw new Error(`${error.message}; server log:\n${serverLog}`);
    });
    assert.deepEqual(
      messages.filter((m) => m.type <= MessageType.Warning),
      [],
      "the server complained about a setting",
    );
  });

  it("drives the status bar from starting through progress to ready", async () => {
    assert.equal(views[0].text, "$(loading~spin) repomem");
    const progress = views.filter((v) => /^\$\(sync~spin\) repomem \d+%$/.test(v.text));
    assert.ok(progress.length > 0, `no progress view in ${JSON.stringify(views.map((v) => v.text))}`);
    assert.match(progress[0].tooltip, /^repomem: indexing/);
    assert.match(status.view().tooltip, /index ready \(4 files, \d+ fragments\)/);
  });

  it("completes from another file of the repository, in the list and inline", async () => {
    await connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: uri("pkg/app.py"), languageId: "python", version: 1, text: TYPED },
    });
    const position = { line: 1, character: "    client = make_client(".length };
    const list = await connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: uri("pkg/app.py") },
      position,
    });
    assert.ok(list && "items" in list, `unexpected completion result ${JSON.stringify(list)}`);
    const [item] = list.items;
    assert.ok(item, "no completion item");
    assert.ok(item.textEdit && "newText" in item.textEdit);
    assert.ok(item.textEdit.newText.endsWith(EXPECTED), item.textEdit.newText);
    assert.match(item.detail ?? "", /pkg\/config\.py/);

    const inline = await connection.sendRequest(InlineCompletionRequest.type, {
      textDocument: { uri: uri("pkg/app.py") },
      position,
      context: { triggerKind: InlineCompletionTriggerKind.Automatic },
    });
    const items = inline && "items" in inline ? inline.items : inline;
    assert.ok(items && items.length > 0, "no inline completion");
    assert.equal(items[0].insertText, EXPECTED);
  });

  it("stops completing when repomem.enable is turned off", async () => {
    const off = serverSettings(
      new FakeConfiguration(declaredDefaults, { workspace: { enable: false } }),
      serverSettingKeys(packageJson),
    );
    await connection.sendNotification(DidChangeConfigurationNotification.type, {
      settings: { repomem: off },
    });
    const result = await connection.sendRequest(CompletionRequest.type, {
      textDocument: { uri: uri("pkg/app.py") },
      position: { line: 1, character: "    client = make_client(".length },
    });
    assert.equal(result, null);
  });

  it("shows the server's own defaults in package.json", async () => {
    // the last settings sent set only `enable`: the rest is the server's defaults
    const effective = await connection.sendRequest<{ settings: Record<string, unknown> }>(
      "repomem/status",
      {},
    );
    for (const key of serverSettingKeys(packageJson).filter((k) => k !== "enable")) {
      const [section, name] = key.includes(".") ? key.split(".") : [undefined, key];
      const value =
        section === undefined
          ? effective.settings[name]
          : (effective.settings[section] as Record<string, unknown>)[snakeCase(name)];
      assert.deepEqual(value, declaredDefaults[key], `repomem.${key}`);
    }
  });
});

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`);
}
