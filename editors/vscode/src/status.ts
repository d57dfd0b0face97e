/**
 * The status-bar item: where the server is between starting, indexing and ready.
 *
 * `IndexStatus` is the state machine, fed by the client's life cycle, the server's
 * `$/progress` work-done reports and its `repomem/indexReady` notification; `StatusBar` only
 * draws what it says.
 */
import * as vscode from "vscode";

/** The three shapes of a `$/progress` work-done value (LSP `WorkDoneProgress*`). */
export type WorkDoneProgressValue =
  | { kind: "begin"; title: string; message?: string; percentage?: number }
  | { kind: "report"; message?: string; percentage?: number }
  | { kind: "end"; message?: string };

/** What the item shows. */
export interface StatusView {
  text: string;
  tooltip: string;
  /** Drawn with the error background: the server is not there to answer. */
  error: boolean;
}

type Lifecycle = "stopped" | "starting" | "running" | "failed";

interface Task {
  title: string;
  message?: string;
  percentage?: number;
}

export const INDEX_READY = "repomem/indexReady";

export class IndexStatus {
  private lifecycle: Lifecycle = "stopped";
  private failure = "";
  private enabled = true;
  /** The last `repomem/indexReady` of each workspace folder, by its root. */
  private readonly ready = new Map<string, Record<string, unknown>>();
  /** Work-done tasks that began and have not ended, oldest first. */
  private readonly tasks = new Map<string | number, Task>();

  constructor(private readonly onChange: (view: StatusView) => void) {}

  /** The client is (re)starting the server: whatever it had indexed is gone. */
  starting(): void {
    this.lifecycle = "starting";
    this.ready.clear();
    this.tasks.clear();
    this.changed();
  }

  running(): void {
    this.lifecycle = "running";
    this.changed();
  }

  stopped(): void {
    this.lifecycle = "stopped";
    this.tasks.clear();
    this.changed();
  }

  failed(message: string): void {
    this.lifecycle = "failed";
    this.failure = message;
    this.tasks.clear();
    this.changed();
  }

  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    this.changed();
  }

  progress(token: string | number, value: WorkDoneProgressValue): void {
    if (value.kind === "begin") {
      this.tasks.set(token, {
        title: value.title,
        message: value.message,
        percentage: value.percentage,
      });
    } else if (value.kind === "report") {
      const task = this.tasks.get(token);
      if (task === undefined) {
        return;
      }
      task.message = value.message ?? task.message;
      task.percentage = value.percentage ?? task.percentage;
    } else {
      this.tasks.delete(token);
    }
    this.changed();
  }

  indexReady(params: unknown): void {
    const ready: Record<string, unknown> =
      typeof params === "object" && params !== null ? { ...params } : {};
    this.ready.set(String(ready.root ?? ""), ready);
    this.changed();
  }

  view(): StatusView {
    if (this.lifecycle === "failed") {
      return {
        text: "$(error) repomem",
        tooltip: `repomem: ${this.failure}\nClick to show the output.`,
        error: true,
      };
    }
    if (this.lifecycle === "stopped") {
      return {
        text: "$(debug-stop) repomem",
        tooltip: "repomem: the language server is not running. Click to show the output.",
        error: true,
      };
    }
    if (this.lifecycle === "starting") {
      return {
        text: "$(loading~spin) repomem",
        tooltip: "repomem: starting the language server",
        error: false,
      };
    }
    const task = [...this.tasks.values()].pop();
    if (task !== undefined) {
      const percent = task.percentage === undefined ? "" : ` ${Math.round(task.percentage)}%`;
      const message = task.message ? `: ${task.message}` : "";
      return {
        text: `$(sync~spin) repomem${percent}`,
        tooltip: `${task.title}${message}`,
        error: false,
      };
    }
    if (this.ready.size === 0) {
      return {
        text: "$(sync~spin) repomem",
        tooltip: "repomem: waiting for the index",
        error: false,
      };
    }
    const summary = `repomem: index ready${describeFolders([...this.ready.values()])}`;
    if (!this.enabled) {
      return {
        text: "$(circle-slash) repomem",
        tooltip: `${summary}; completions are off (repomem.enable)`,
        error: false,
      };
    }
    return { text: "$(check) repomem", tooltip: summary, error: false };
  }

  private changed(): void {
    this.onChange(this.view());
  }
}

/** The folders' `repomem/indexReady` parameters in words: " (12 files, 80 fragments)" for
 * one folder, " for app (12 files, 80 fragments), lib (3 files, 9 fragments)" for several. */
function describeFolders(folders: Record<string, unknown>[]): string {
  if (folders.length === 1) {
    return describeIndex(folders[0]);
  }
  const named = folders.map((ready) => `${baseName(ready.root)}${describeIndex(ready)}`);
  return ` for ${named.join(", ")}`;
}

function baseName(root: unknown): string {
  return typeof root === "string" ? (root.split(/[\\/]/).pop() ?? root) : "?";
}

/** `repomem/indexReady` parameters in words, e.g. " (12 files, 80 fragments)". */
function describeIndex(params: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const noun of ["files", "fragments"]) {
    const count = params[noun];
    if (typeof count === "number") {
      parts.push(`${count} ${noun}`);
    }
  }
  return parts.length === 0 ? "" : ` (${parts.join(", ")})`;
}

/** Draws an `IndexStatus` into a status-bar item that opens the output when clicked. */
export class StatusBar implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;

  constructor(command: string) {
    this.item = vscode.window.createStatusBarItem("repomem.status", vscode.StatusBarAlignment.Right, 100);
    this.item.name = "repomem";
    this.item.command = command;
  }

  show(view: StatusView): void {
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor = view.error
      ? new vscode.ThemeColor("statusBarItem.errorBackground")
      : undefined;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
