// The TypeScript card oracle: the compiler's own "go to definition" over a repository.
// Usage: node tsoracle.js TYPESCRIPT_LIB_DIR REPO_DIR
// Reads one JSON request per line: {"file": "a/b.ts", "points": [[line, character], ...]}
// (0-based, characters in UTF-16 code units) and answers one JSON line per request:
// for each point, the definitions [[file, line], ...], file relative to the repository
// (or null when the definition lies outside it: the standard library, a package).
"use strict";
const fs = require("fs");
const path = require("path");
const readline = require("readline");
const ts = require(path.join(process.argv[2], "lib", "typescript.js"));
const root = path.resolve(process.argv[3]);

function walk(dir, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (/\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/.test(entry.name)) out.push(full);
  }
  return out;
}

const files = walk(root, []);
const options = {
  allowJs: true,
  target: ts.ScriptTarget.ES2020,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  jsx: ts.JsxEmit.Preserve,
  noEmit: true,
  skipLibCheck: true,
  lib: ["lib.es2020.d.ts", "lib.dom.d.ts"],
};
const host = {
  getScriptFileNames: () => files,
  getScriptVersion: () => "1",
  getScriptSnapshot: (name) =>
    fs.existsSync(name) ? ts.ScriptSnapshot.fromString(fs.readFileSync(name, "utf8")) : undefined,
  getCurrentDirectory: () => root,
  getCompilationSettings: () => options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());

function answer(request) {
  const file = path.join(root, request.file);
  const source = service.getProgram().getSourceFile(file);
  if (!source) return request.points.map(() => []);
  return request.points.map(([line, character]) => {
    let position;
    try {
      position = ts.getPositionOfLineAndCharacter(source, line, character);
    } catch (e) {
      return [];
    }
    // an import of a module the compiler cannot find leads only to the import's own binding
    // (kind "alias"): the compiler knows no definition there, it does not name another one
    const found = (service.getDefinitionAtPosition(file, position) || []).filter(
      (d) => d.kind !== ts.ScriptElementKind.alias,
    );
    return found.map((d) => {
      const inside = path.resolve(d.fileName).startsWith(root + path.sep);
      const target = service.getProgram().getSourceFile(d.fileName);
      const span = d.contextSpan || d.textSpan;
      const at = target ? ts.getLineAndCharacterOfPosition(target, span.start).line : -1;
      return [inside ? path.relative(root, d.fileName).split(path.sep).join("/") : null, at];
    });
  });
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (text) => {
  let reply;
  try {
    reply = answer(JSON.parse(text));
  } catch (e) {
    reply = { error: String(e) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
});
