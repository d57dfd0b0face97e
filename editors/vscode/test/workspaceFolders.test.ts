/**
 * Every workspace folder reaches the server. The extension's client options pin no single
 * folder (`workspaceFolder`), which is when vscode-languageclient registers its workspace-folders
 * feature; that feature, driven here through the extension's middleware, sends every folder at
 * `initialize`, answers `workspace/workspaceFolders` with every folder, and sends each folder added
 * or removed later as `workspace/didChangeWorkspaceFolders` (once the server advertises
 * `changeNotifications`, as `repomem serve` does: server.e2e.test.ts).
 */
import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OutputChannel } from "vscode";
import { WorkspaceFoldersFeature } from "vscode-languageclient/lib/common/workspaceFolder";
import type { InitializeParams } from "vscode-languageclient/node";
import { clientOptions } from "../src/clientOptions";
import { IndexStatus } from "../src/status";
import { changeWorkspaceFolders, type FakeWorkspaceFolder, workspace } from "./fakeVscode";

function folder(name: string, index: number): FakeWorkspaceFolder {
  return { uri: { fsPath: `/work/${name}`, toString: () => `file:///work/${name}` }, name, index };
}

const protocol = (f: FakeWorkspaceFolder) => ({ uri: `file:///work/${f.name}`, name: f.name });

describe("workspace folders", () => {
  const status = new IndexStatus(() => undefined);
  const options = clientOptions(status, () => ({}), {} as OutputChannel);

  it("are not narrowed to one folder by the client options", () => {
    assert.equal(options.workspaceFolder, undefined);
  });

  it("go to the server at initialize, on request and as they are added or removed", async () => {
    const [alpha, beta, gamma, delta] = ["alpha", "beta", "gamma", "delta"].map(folder);
    workspace.workspaceFolders = [alpha, beta, gamma];
    const sent: { method: string; params: unknown }[] = [];
    const handlers = new Map<string, () => unknown>();
    const client = {
      middleware: options.middleware ?? {},
      code2ProtocolConverter: { asUri: (uri: { toString(): string }) => uri.toString() },
      onRequest: (type: { method: string }, handler: () => unknown) => {
        handlers.set(type.method, handler);
        return { dispose: () => undefined };
      },
      sendNotification: async (type: { method: string }, params: unknown) => {
        sent.push({ method: type.method, params });
      },
      error: (message: string, error: unknown) => assert.fail(`${message}: ${error}`),
    };
    const feature = new WorkspaceFoldersFeature(client as never);

    const params = {} as InitializeParams;
    feature.fillInitializeParams(params);
    assert.deepEqual(params.workspaceFolders, [alpha, beta, gamma].map(protocol));

    feature.initialize({
      workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
    });
    const answer = () => handlers.get("workspace/workspaceFolders")?.();
    assert.deepEqual(answer(), [alpha, beta, gamma].map(protocol));
    assert.deepEqual(sent, [], "the folders did not change since initialize");

    changeWorkspaceFolders([alpha, beta, gamma, delta], { added: [delta], removed: [] });
    changeWorkspaceFolders([alpha, gamma, delta], { added: [], removed: [beta] });
    await new Promise((resolve) => setImmediate(resolve));
    const method = "workspace/didChangeWorkspaceFolders";
    assert.deepEqual(sent, [
      { method, params: { event: { added: [protocol(delta)], removed: [] } } },
      { method, params: { event: { added: [], removed: [protocol(beta)] } } },
    ]);
    assert.deepEqual(answer(), [alpha, gamma, delta].map(protocol));
    feature.clear();
  });
});
