/**
 * Entry point: starts `repomem serve`, keeps its settings in step with VS Code's, and shows its
 * index state in the status bar. The completions themselves come from vscode-languageclient:
 * the list from its completion feature, ghost text from its proposed inline-completion feature.
 */
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  State,
} from "vscode-languageclient/node";
import { clientOptions } from "./clientOptions";
import { processEnvironment, resolveServerCommand, SERVER_PATH_SETTING } from "./serverCommand";
import { SECTION, serverSettingKeys, serverSettings } from "./settings";
import { INDEX_READY, IndexStatus, StatusBar } from "./status";
import { VISIBLE_RANGES, VisibleRangesSender } from "./visibleRanges";

const SHOW_OUTPUT = "repomem.showOutput";
/** The palette command; the server's own `repomem.ask` is registered by the language client. */
const ASK_DOCS = "repomem.askDocs";

let stopClient: (() => Promise<void>) | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("repomem");
  const bar = new StatusBar(SHOW_OUTPUT);
  const status = new IndexStatus((view) => bar.show(view));
  const keys = serverSettingKeys(context.extension.packageJSON);
  const readSettings = () => serverSettings(configuration(), keys);
  let client: LanguageClient | undefined;
  // what is on screen, for the prompt (sent only while the server runs)
  const visible = new VisibleRangesSender((params) => {
    if (client?.isRunning()) {
      void client.sendNotification(VISIBLE_RANGES, params);
    }
  });

  async function start(): Promise<void> {
    status.starting();
    status.setEnabled(configuration().get<boolean>("enable", true));
    let command;
    try {
      command = resolveServerCommand(
        configuration().get<string>("serverPath"),
        processEnvironment(workspaceFolder()),
      );
    } catch (error) {
      fail(status, errorMessage(error), SERVER_PATH_SETTING);
      return;
    }
    output.appendLine(`starting ${command.command} ${command.args.join(" ")}`);
    const started = new LanguageClient(
      "repomem",
      "repomem",
      { command: command.command, args: command.args, options: { cwd: workspaceFolder() } },
      clientOptions(status, readSettings, output),
    );
    started.registerProposedFeatures();
    started.onNotification(INDEX_READY, (params) => status.indexReady(params));
    started.onDidChangeState((event) => {
      if (event.newState === State.Starting) {
        status.starting();
      } else if (event.newState === State.Running) {
        status.running();
      } else {
        status.stopped();
      }
    });
    client = started;
    try {
      await started.start();
      visible.update(vscode.window.activeTextEditor);
    } catch (error) {
      fail(status, `the language server did not start: ${errorMessage(error)}`, SECTION);
    }
  }

  async function stop(): Promise<void> {
    const running = client;
    client = undefined;
    if (running !== undefined) {
      await running.dispose();
    }
  }
  stopClient = stop;

  context.subscriptions.push(
    output,
    bar,
    vscode.commands.registerCommand("repomem.restart", async () => {
      await stop();
      await start();
    }),
    vscode.commands.registerCommand(SHOW_OUTPUT, () => output.show()),
    { dispose: () => visible.dispose() },
    vscode.window.onDidChangeTextEditorVisibleRanges((event) => visible.update(event.textEditor)),
    vscode.window.onDidChangeActiveTextEditor((editor) => visible.update(editor)),
    vscode.commands.registerCommand(ASK_DOCS, async () => {
      const question = await vscode.window.showInputBox({
        prompt: "Ask a question about this repository's docs",
      });
      if (!question?.trim() || client === undefined) {
        return;
      }
      try {
        // the docs of the active editor's folder (the first folder's without one)
        const active = vscode.window.activeTextEditor?.document.uri;
        const folder = active && vscode.workspace.getWorkspaceFolder(active)?.uri.toString();
        const result = await client.sendRequest(ExecuteCommandRequest.type, {
          command: "repomem.ask",
          arguments: folder ? [question, { folder }] : [question],
        });
        const document = await vscode.workspace.openTextDocument({ content: result.text });
        await vscode.window.showTextDocument(document, { preview: true });
      } catch (error) {
        void vscode.window.showErrorMessage(`repomem: ${errorMessage(error)}`);
      }
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration(SECTION)) {
        return;
      }
      if (event.affectsConfiguration(SERVER_PATH_SETTING)) {
        await stop();
        await start();
        return;
      }
      status.setEnabled(configuration().get<boolean>("enable", true));
      if (client?.isRunning()) {
        await client.sendNotification(DidChangeConfigurationNotification.type, {
          settings: { [SECTION]: readSettings() },
        });
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await stopClient?.();
  stopClient = undefined;
}

function configuration(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration(SECTION, vscode.workspace.workspaceFolders?.[0]?.uri);
}

function workspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function fail(status: IndexStatus, message: string, setting: string): void {
  status.failed(message);
  void vscode.window.showErrorMessage(`repomem: ${message}`, "Open Settings").then((choice) => {
    if (choice !== undefined) {
      void vscode.commands.executeCommand("workbench.action.openSettings", setting);
    }
  });
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
