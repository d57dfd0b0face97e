/**
 * Loaded with `node --require` before the tests: resolves `import "vscode"` to `fakeVscode`,
 * because the real module exists only inside a running VS Code.
 */
import Module = require("node:module");

const fake = require.resolve("./fakeVscode");
type Resolve = (request: string, ...rest: unknown[]) => string;
const internals = Module as unknown as { _resolveFilename: Resolve };
const resolve = internals._resolveFilename;
internals._resolveFilename = function (this: unknown, request: string, ...rest: unknown[]) {
  return request === "vscode" ? fake : resolve.call(this, request, ...rest);
};
