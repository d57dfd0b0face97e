/**
 * VS Code settings -> the `repomem` object the server reads from `initializationOptions`,
 * `workspace/didChangeConfiguration` and `workspace/configuration`.
 *
 * Only values a user actually set (user, workspace or folder level) are sent. The defaults in
 * package.json are there for the settings editor; sending them would override the
 * repository's own `.repomem.toml` / `pyproject.toml`, which the server reads underneath.
 */

/** The configuration section, and the key the server looks for. */
export const SECTION = "repomem";

/** Settings of the extension itself, relative to `repomem.`; the server never sees them. */
export const CLIENT_ONLY: ReadonlySet<string> = new Set(["serverPath", "trace.server"]);

/** The parts of `vscode.WorkspaceConfiguration` this module reads. */
export interface Inspectable {
  inspect<T>(key: string):
    | { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T }
    | undefined;
}

/** What the server receives under `repomem`: `{enable, debounceMs, backend: {...}, ...}`. */
export interface ServerSettings {
  [key: string]: unknown;
}

interface PackageJson {
  contributes?: { configuration?: { properties?: Record<string, unknown> } };
}

/** Keys (relative to `repomem.`) that package.json declares and the server reads. */
export function serverSettingKeys(packageJson: PackageJson): string[] {
  const properties = packageJson.contributes?.configuration?.properties ?? {};
  const prefix = `${SECTION}.`;
  return Object.keys(properties)
    .filter((name) => name.startsWith(prefix))
    .map((name) => name.slice(prefix.length))
    .filter((key) => !CLIENT_ONLY.has(key));
}

/** The settings a user set for `keys`, nested by their dotted names. */
export function serverSettings(config: Inspectable, keys: readonly string[]): ServerSettings {
  const result: ServerSettings = {};
  for (const key of keys) {
    const value = explicitValue(config, key);
    if (value !== undefined) {
      setNested(result, key.split("."), value);
    }
  }
  return result;
}

/** The value of a `workspace/configuration` item's section (`repomem` or below it). */
export function sectionValue(settings: ServerSettings, section: string): unknown {
  if (section === SECTION) {
    return settings;
  }
  if (!section.startsWith(`${SECTION}.`)) {
    return null;
  }
  let node: unknown = settings;
  for (const part of section.slice(SECTION.length + 1).split(".")) {
    if (typeof node !== "object" || node === null || !(part in node)) {
      return null;
    }
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function explicitValue(config: Inspectable, key: string): unknown {
  const inspected = config.inspect<unknown>(key);
  if (inspected === undefined) {
    return undefined;
  }
  // the most specific scope wins, as in VS Code itself
  for (const value of [
    inspected.workspaceFolderValue,
    inspected.workspaceValue,
    inspected.globalValue,
  ]) {
    if (value !== undefined) {
      return value;
    }
  }
  return undefined;
}

function setNested(target: ServerSettings, path: string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const child = node[part];
    if (typeof child !== "object" || child === null) {
      node[part] = {};
    }
    node = node[part] as ServerSettings;
  }
  node[path[path.length - 1]] = value;
}
