/** The few `vscode` APIs the extension's logic touches, recording what it does with them. */

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class FakeStatusBarItem {
  name: string | undefined;
  text = "";
  tooltip: string | undefined;
  command: string | undefined;
  backgroundColor: ThemeColor | undefined;
  visible = false;
  disposed = false;

  constructor(
    readonly id: string,
    readonly alignment: StatusBarAlignment,
    readonly priority: number,
  ) {}

  show(): void {
    this.visible = true;
  }

  hide(): void {
    this.visible = false;
  }

  dispose(): void {
    this.disposed = true;
  }
}

/** Every item `window.createStatusBarItem` made, in order. */
export const statusBarItems: FakeStatusBarItem[] = [];

export const window = {
  createStatusBarItem(id: string, alignment: StatusBarAlignment, priority: number) {
    const item = new FakeStatusBarItem(id, alignment, priority);
    statusBarItems.push(item);
    return item;
  },
};

type Scope = "global" | "workspace" | "workspaceFolder";

/** `WorkspaceConfiguration.inspect` over values set per scope (keys relative to `repomem.`). */
export class FakeConfiguration {
  constructor(
    private readonly defaults: Record<string, unknown>,
    private readonly values: Partial<Record<Scope, Record<string, unknown>>> = {},
  ) {}

  inspect<T>(key: string) {
    if (!(key in this.defaults) && !Object.values(this.values).some((v) => key in v)) {
      return undefined;
    }
    return {
      key,
      defaultValue: this.defaults[key] as T | undefined,
      globalValue: this.values.global?.[key] as T | undefined,
      workspaceValue: this.values.workspace?.[key] as T | undefined,
      workspaceFolderValue: this.values.workspaceFolder?.[key] as T | undefined,
    };
  }
}

/** What the tests need of a `WorkspaceFolder`. */
export interface FakeWorkspaceFolder {
  uri: { fsPath: string; toString(): string };
  name: string;
  index: number;
}

interface FoldersChange {
  added: FakeWorkspaceFolder[];
  removed: FakeWorkspaceFolder[];
}
const folderListeners = new Set<(change: FoldersChange) => void>();

/** `workspace.workspaceFolders` as a test sets it, and its change event. */
export const workspace = {
  workspaceFolders: undefined as FakeWorkspaceFolder[] | undefined,
  onDidChangeWorkspaceFolders(listener: (change: FoldersChange) => void) {
    folderListeners.add(listener);
    return { dispose: () => folderListeners.delete(listener) };
  },
};

/** Changes the folders as VS Code does: the list first, then the event. */
export function changeWorkspaceFolders(
  folders: FakeWorkspaceFolder[],
  change: FoldersChange,
): void {
  workspace.workspaceFolders = folders;
  for (const listener of folderListeners) {
    listener(change);
  }
}
