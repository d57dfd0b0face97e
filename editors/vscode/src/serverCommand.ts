/**
 * Which executable runs `repomem serve`.
 *
 * Resolved here rather than left to `spawn`, so that a missing executable gives a message that
 * names the setting to change, and so that a repository's own virtual environment is found
 * without any setting at all.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The setting that names the executable. */
export const SERVER_PATH_SETTING = "repomem.serverPath";

export const DEFAULT_SERVER_PATH = "repomem";

/** Where resolution looks; the extension passes the real process state, tests their own. */
export interface Environment {
  platform: NodeJS.Platform;
  env: Record<string, string | undefined>;
  home: string;
  /** The first workspace folder, if a folder is open. */
  workspaceFolder: string | undefined;
  isExecutable(file: string): boolean;
}

/** This process's environment, with `workspaceFolder` as the open folder. */
export function processEnvironment(workspaceFolder: string | undefined): Environment {
  return {
    platform: process.platform,
    env: process.env,
    home: os.homedir(),
    workspaceFolder,
    isExecutable: (file) => {
      try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
      } catch {
        return false;
      }
    },
  };
}

export interface ServerCommand {
  command: string;
  args: string[];
}

/** The executable could not be found; the message says where it was looked for. */
export class ServerNotFoundError extends Error {}

/** The command that starts the language server for the `repomem.serverPath` value `setting`. */
export function resolveServerCommand(
  setting: string | undefined,
  environment: Environment,
): ServerCommand {
  const command = resolveExecutable(setting?.trim() || DEFAULT_SERVER_PATH, environment);
  return { command, args: ["serve"] };
}

function resolveExecutable(setting: string, environment: Environment): string {
  const pathApi = pathFor(environment);
  const expanded = expand(setting, environment);
  if (pathApi.basename(expanded) !== expanded) {
    let candidate = expanded;
    if (!pathApi.isAbsolute(candidate)) {
      if (environment.workspaceFolder === undefined) {
        throw new ServerNotFoundError(
          `${SERVER_PATH_SETTING} is the relative path "${setting}", but no folder is open ` +
            "to resolve it against; use an absolute path.",
        );
      }
      candidate = pathApi.resolve(environment.workspaceFolder, candidate);
    }
    const found = withExtensions(candidate, environment).find(environment.isExecutable);
    if (found === undefined) {
      throw new ServerNotFoundError(
        `${SERVER_PATH_SETTING}: "${candidate}" is not an executable file.`,
      );
    }
    return found;
  }

  const searched = [
    ...searchPath(environment, pathApi),
    ...venvDirectories(environment, pathApi),
  ].map((dir) => pathApi.join(dir, expanded));
  for (const candidate of searched) {
    const found = withExtensions(candidate, environment).find(environment.isExecutable);
    if (found !== undefined) {
      return found;
    }
  }
  const where = environment.workspaceFolder === undefined ? "PATH" : "PATH, .venv or venv";
  throw new ServerNotFoundError(
    `"${expanded}" was not found on ${where}. Install repomem from a clone of its repository ` +
      `(pip install .; the PyPI package named "repomem" is another project) ` +
      `or set ${SERVER_PATH_SETTING} to the repomem executable.`,
  );
}

function expand(value: string, environment: Environment): string {
  let result = value;
  if (result.includes("${workspaceFolder}")) {
    if (environment.workspaceFolder === undefined) {
      throw new ServerNotFoundError(
        `${SERVER_PATH_SETTING} uses \${workspaceFolder}, but no folder is open.`,
      );
    }
    result = result.split("${workspaceFolder}").join(environment.workspaceFolder);
  }
  if (result === "~" || result.startsWith("~/") || result.startsWith("~\\")) {
    result = environment.home + result.slice(1);
  }
  return result;
}

function pathFor(environment: Environment): path.PlatformPath {
  return environment.platform === "win32" ? path.win32 : path.posix;
}

function searchPath(environment: Environment, pathApi: path.PlatformPath): string[] {
  const value = environment.env.PATH ?? environment.env.Path ?? "";
  return value.split(pathApi.delimiter).filter((dir) => dir.length > 0);
}

function venvDirectories(environment: Environment, pathApi: path.PlatformPath): string[] {
  const folder = environment.workspaceFolder;
  if (folder === undefined) {
    return [];
  }
  const bin = environment.platform === "win32" ? "Scripts" : "bin";
  return [".venv", "venv"].map((venv) => pathApi.join(folder, venv, bin));
}

/** On Windows a script installed by pip is `repomem.exe`; elsewhere the name as given. */
function withExtensions(file: string, environment: Environment): string[] {
  if (environment.platform !== "win32" || path.win32.extname(file) !== "") {
    return [file];
  }
  const extensions = (environment.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";");
  return extensions.filter((ext) => ext.length > 0).map((ext) => file + ext.toLowerCase());
}
