// @ts-check
/**
 * Drives the packaged extension in a real VS Code (code-server, in headless Chromium) on a
 * multi-root workspace: a `.code-workspace` file whose folders are repositories of their own,
 * each with a `pkg/config.py` that calls a helper of its own (`alpha_helper` in folder alpha,
 * and so on) and the same `pkg/app.py`. In each folder's `pkg/app.py` it waits for the repomem
 * status-bar item to say that folder's index is ready, types the same start of a call, and checks
 * that the inline suggestion is the rest of that folder's own call, its own helper named and no
 * other folder's. Then it adds one more folder to the workspace file, as a user editing it would,
 * and checks that folder the same way: its index in the status bar, its own helper in the ghost
 * text.
 *
 * In the first folder it also checks that VS Code's accept-next-word
 * (`editor.action.inlineSuggest.acceptNextWord`, Ctrl+Right) takes the suggestion's first word
 * and leaves the rest shown, and that Tab takes the rest.
 *
 * It prints a pass or fail line per folder and exits non-zero if any folder failed.
 *
 * Started by .ci/vscode_real.sh, which installs code-server and playwright-core (found through
 * NODE_PATH), writes the fixture repositories and the workspace file and starts code-server.
 *
 * Usage: node test-real/drive.js URL WORKSPACE_FILE ADDED_FOLDER OUT_DIR
 */
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { chromium } = require("playwright-core");

// typed over line 2 of each folder's pkg/app.py; VS Code closes the parenthesis itself
const TYPED = "client = make_client(";
/**
 * The ghost text in folder `name`: the rest of the call as its pkg/config.py writes it, up to the
 * closing parenthesis, with run()'s own parameter in place of connect()'s (the built-in backend
 * copies near-duplicate code with the cursor's names).
 *
 * @param {string} name
 */
const expected = (name) => `${name}_helper(opts.host), opts.port`;
const HELPER = /\b(\w+)_helper\b/g;

const WORKBENCH_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 180_000;
const ADDED_READY_TIMEOUT_MS = 90_000;
const SUGGESTION_TIMEOUT_MS = 30_000;
const EDIT_TIMEOUT_MS = 10_000;

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  // without these Chromium's own background connections crowd out the page's on this network
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

// What the page shows, read in the page. The editor draws spaces as no-break spaces.

/** The accessible label of the extension's status-bar item (its text and tooltip). */
const STATUS_LABEL = () =>
  document
    .getElementById("repomem.repomem.repomem.status")
    ?.querySelector("a")
    ?.getAttribute("aria-label") ?? "(no repomem status-bar item)";

/** The ghost text in the editors. */
const GHOST_TEXT = () =>
  [...document.querySelectorAll(".monaco-editor :is(.ghost-text-decoration, .ghost-text)")]
    .map((element) => (element.textContent ?? "").replace(/\u00a0/g, " "))
    .join("");

/** The editors' lines as drawn, ghost text included. */
const LINES = () =>
  [...document.querySelectorAll(".monaco-editor .view-line")].map((line) =>
    (line.textContent ?? "").replace(/\u00a0/g, " "),
  );

/** The window's title: the active editor's full path (the run's `window.title` setting). */
const TITLE = () => document.title;

/**
 * Reads `probe` in `page` until `done` holds for what it read, and returns that; after
 * `timeoutMs`, fails with `what` and the last thing read.
 *
 * @template T
 * @param {import("playwright-core").Page} page
 * @param {string} what
 * @param {() => T} probe
 * @param {(value: T) => boolean} done
 * @param {number} timeoutMs
 * @returns {Promise<T>}
 */
async function until(page, what, probe, done, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = /** @type {T} */ (await page.evaluate(probe));
    if (done(value)) {
      return value;
    }
    if (Date.now() > deadline) {
      const shown = JSON.stringify(value);
      throw new Error(`${what} within ${timeoutMs / 1000} s; the page showed ${shown}`);
    }
    await page.waitForTimeout(250);
  }
}

/** The accessible labels of Quick Open's rows. */
const QUICK_OPEN_ROWS = () =>
  [...document.querySelectorAll(".quick-input-list .monaco-list-row")].map(
    (row) => row.getAttribute("aria-label") ?? "",
  );

/**
 * Opens `file` (an absolute path, ROOT/pkg/app.py) with Quick Open, which takes absolute paths:
 * the row that names its folder (the files recently opened in other folders, which it also
 * lists, have the same name), and checks that the window's title names it.
 *
 * @param {import("playwright-core").Page} page
 * @param {string} file
 */
async function openFile(page, file) {
  const folder = path.basename(path.dirname(path.dirname(file)));
  const ours = (/** @type {string} */ label) =>
    label.includes(path.basename(file)) &&
    (label.includes(path.dirname(file)) || new RegExp(`\\b${folder}\\b`).test(label));
  await page.keyboard.press("Control+P");
  await page.waitForSelector(".quick-input-widget input", { state: "visible" });
  await page.keyboard.type(file);
  const rows = await until(
    page,
    `Quick Open listed no row for ${file}`,
    QUICK_OPEN_ROWS,
    (labels) => labels.some(ours),
    EDIT_TIMEOUT_MS,
  );
  await page.locator(".quick-input-list .monaco-list-row").nth(rows.findIndex(ours)).click();
  const opened = (/** @type {string} */ title) => title.includes(file);
  await until(page, `${file} did not open`, TITLE, opened, EDIT_TIMEOUT_MS);
  await until(
    page,
    `${file} did not show`,
    LINES,
    (lines) => lines.includes("def run(opts):"),
    EDIT_TIMEOUT_MS,
  );
}

/**
 * Waits until the status-bar item names `name` among the folders whose index is ready.
 *
 * @param {import("playwright-core").Page} page
 * @param {string} name
 * @param {number} timeoutMs
 */
function folderReady(page, name, timeoutMs) {
  return until(
    page,
    `the repomem status-bar item did not name ${name} as ready`,
    STATUS_LABEL,
    (label) => label.includes("index ready for") && label.includes(`${name} (`),
    timeoutMs,
  );
}

/**
 * In `root`'s pkg/app.py: waits for its index, types over line 2 and waits for the ghost text of
 * its own helper; fails if the ghost text names another folder's helper. Returns the ghost text
 * and how long after the last key it showed.
 *
 * @param {import("playwright-core").Page} page
 * @param {string} root
 * @param {number} readyTimeoutMs
 * @param {string} outDir
 * @returns {Promise<{ ghost: string, ms: number }>}
 */
async function completeIn(page, root, readyTimeoutMs, outDir) {
  const name = path.basename(root);
  await openFile(page, path.join(root, "pkg", "app.py"));
  await folderReady(page, name, readyTimeoutMs);
  // line 2 is "    pass": select all but its indentation and type over it
  await page.keyboard.press("Control+G");
  await page.keyboard.type("2");
  await page.keyboard.press("Enter");
  await page.keyboard.press("End");
  await page.keyboard.press("Shift+Home");
  await page.keyboard.type(TYPED, { delay: 30 });
  const typedAt = Date.now();
  const want = expected(name);
  const ghost = await until(
    page,
    `no inline suggestion with "${want}" appeared`,
    GHOST_TEXT,
    (text) => text.includes(want),
    SUGGESTION_TIMEOUT_MS,
  );
  const others = [...ghost.matchAll(HELPER)].map((m) => m[1]).filter((other) => other !== name);
  if (others.length > 0) {
    throw new Error(`the ghost text "${ghost}" names another folder's helper: ${others}`);
  }
  const ms = Date.now() - typedAt;
  await page.screenshot({ path: path.join(outDir, `ghost-text-${name}.png`) });
  return { ghost, ms };
}

/**
 * In the first folder, after its ghost text: Ctrl+Right takes the first word, Tab the rest.
 *
 * @param {import("playwright-core").Page} page
 * @param {string} name
 */
async function acceptWordThenRest(page, name) {
  const suggestion = expected(name);
  // accept-next-word takes the helper's name into the line; the rest of the suggestion stays
  const firstWord = `${name}_helper`;
  const afterWord = suggestion.slice(firstWord.length);
  await page.keyboard.press("Control+ArrowRight");
  const rest = await until(
    page,
    `accepting the next word did not leave "${afterWord}" shown`,
    GHOST_TEXT,
    (text) => text.includes(afterWord) && !text.includes(suggestion),
    EDIT_TIMEOUT_MS,
  );
  console.log(`drive: ${name}: Ctrl+Right took "${firstWord}"; ghost text "${rest}" stays`);

  // Tab takes the suggestion: the line becomes the call from pkg/config.py, closed once
  const accepted = `    client = make_client(${suggestion})`;
  await page.keyboard.press("Tab");
  await until(page, "Tab left ghost text", GHOST_TEXT, (text) => text === "", EDIT_TIMEOUT_MS);
  await until(
    page,
    `taking the suggestion did not leave line 2 as ${JSON.stringify(accepted)}`,
    LINES,
    (lines) => lines.includes(accepted),
    EDIT_TIMEOUT_MS,
  );
  console.log(`drive: ${name}: Tab took the suggestion; line 2 is the call from pkg/config.py`);
}

async function main() {
  const [url, workspaceFile, added, outDir] = process.argv.slice(2);
  if (outDir === undefined) {
    throw new Error("usage: node test-real/drive.js URL WORKSPACE_FILE ADDED_FOLDER OUT_DIR");
  }
  const workspace = JSON.parse(fs.readFileSync(workspaceFile, "utf8"));
  /** @type {string[]} */
  const initial = workspace.folders.map((/** @type {{ path: string }} */ folder) =>
    path.resolve(path.dirname(workspaceFile), folder.path),
  );
  const browser = await chromium.launchPersistentContext(path.join(outDir, "chromium"), {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 720 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  /** @type {{ line: string, ok: boolean }[]} */
  const results = [];

  /**
   * Checks one folder; a failure is recorded, with a screenshot, and the next folder checked.
   *
   * @param {string} root
   * @param {string} when
   * @param {number} readyTimeoutMs
   * @param {boolean} acceptChecks
   */
  async function checkFolder(root, when, readyTimeoutMs, acceptChecks) {
    const name = path.basename(root);
    const label = `folder ${name} (${when})`;
    try {
      const { ghost, ms } = await completeIn(page, root, readyTimeoutMs, outDir);
      console.log(`drive: ${name}: ghost text "${ghost}" ${ms} ms after typing, at ${elapsed()}`);
      if (acceptChecks) {
        await acceptWordThenRest(page, name);
      }
      const line = `PASS ${label}: ghost text "${ghost}", its own ${name}_helper`;
      results.push({ line, ok: true });
    } catch (error) {
      const failure = path.join(outDir, `failure-${name}.png`);
      await page.screenshot({ path: failure }).catch(() => undefined);
      const message = error instanceof Error ? error.message : String(error);
      results.push({ line: `FAIL ${label}: ${message} (screenshot ${failure})`, ok: false });
      await page.keyboard.press("Escape").catch(() => undefined);
    }
  }

  try {
    await page.goto(`${url}/?workspace=${encodeURIComponent(workspaceFile)}`);
    await page.waitForSelector(".monaco-workbench .part.editor", { timeout: WORKBENCH_TIMEOUT_MS });
    console.log(`drive: workbench loaded with ${initial.length} folders after ${elapsed()}`);

    // opening the first folder's Python file activates the extension
    for (const [i, root] of initial.entries()) {
      await checkFolder(root, "opened at start", READY_TIMEOUT_MS, i === 0);
    }

    // a folder added to the workspace file while the workspace is open
    workspace.folders.push({ path: path.relative(path.dirname(workspaceFile), added) });
    fs.writeFileSync(workspaceFile, JSON.stringify(workspace, null, 2));
    console.log(`drive: added ${added} to ${workspaceFile} after ${elapsed()}`);
    await checkFolder(added, "added after start", ADDED_READY_TIMEOUT_MS, false);
    const status = await page.evaluate(STATUS_LABEL);
    console.log(`drive: status bar "${status}" after ${elapsed()}`);
  } finally {
    await browser.close();
  }
  for (const result of results) {
    console.log(`drive: ${result.line}`);
  }
  const failed = results.filter((result) => !result.ok).length;
  if (failed > 0 || results.length < initial.length + 1) {
    throw new Error(`${failed} of ${initial.length + 1} folders failed`);
  }
}

main().catch((error) => {
  console.error(`drive: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
