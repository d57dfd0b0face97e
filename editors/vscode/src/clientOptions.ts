/**
 * The language-client options: which documents go to the server, the settings it starts with,
 * and the hooks that feed the status bar.
 *
 * Kept apart from `extension.ts` so that the wiring can be checked without a running editor.
 */
import type { OutputChannel } from "vscode";
import type { LanguageClientOptions } from "vscode-languageclient/node";
import { type ServerSettings, SECTION, sectionValue } from "./settings";
import type { IndexStatus } from "./status";

/** VS Code language ids of the languages repomem indexes. */
export const LANGUAGES = [
  "python",
  "javascript",
  "javascriptreact",
  "typescript",
  "typescriptreact",
  "java",
  "go",
  "rust",
  "c",
  "cpp",
] as const;

export function clientOptions(
  status: IndexStatus,
  settings: () => ServerSettings,
  outputChannel: OutputChannel,
): LanguageClientOptions {
  return {
    documentSelector: LANGUAGES.map((language) => ({ scheme: "file", language })),
    outputChannel,
    // a function, so that a restart picks up the settings of that moment
    initializationOptions: () => ({ [SECTION]: settings() }),
    middleware: {
      handleWorkDoneProgress: (token, params, next) => {
        status.progress(token, params);
        next(token, params);
      },
      workspace: {
        configuration: (params) =>
          params.items.map((item) => sectionValue(settings(), item.section ?? "")),
        // The client's own didChangeConfiguration (when the server registers for it) would send
        // every setting with its default, the extension's own ones too; extension.ts sends the
        // settings the user set instead.
        didChangeConfiguration: async () => undefined,
      },
    },
  };
}
