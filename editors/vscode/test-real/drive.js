// @ts-check
/**
 * Drives the packaged extension in a real VS Code (code-server, in headless Chromium): waits
 * for the repomem status-bar item to say the index is ready, types in pkg/app.py, and checks
 * that the inline suggestion shows the rest of a line that only pkg/config.py holds (in the
 * names of the function typed in), that VS Code's accept-next-word
 * (`editor.action.inlineSuggest.acceptNextWord`, Ctrl+Right) takes its first word and leaves
 * the rest shown, and that Tab takes the rest.
 *
 * Started by .ci/vscode_real.sh, which installs code-server and playwright-core (found through
 * NODE_PATH), writes the fixture workspace and starts code-server.
 *
 * Usage: node test-real/drive.js URL WORKSPACE OUT_DIR
 */
"use strict";

const path = require("node:path");
const { chromium } = require("playwright-core");

// typed over line 2 of pkg/app.py; VS Code closes the parenthesis itself
const TYPED = "client = make_client(";
// the ghost text: the rest of the call as pkg/config.py writes it, up to the closing
// parenthesis, with run()'s own parameter in place of connect()'s (the built-in backend copies
// near-duplicate code with the cursor's names)
const EXPECTED = "opts.host, opts.port, timeout=opts.timeout";
const ACCEPTED = `    client = make_client(${EXPECTED})`;
// what accept-next-word takes of it, and the ghost text left
const FIRST_WORD = "opts";
const AFTER_WORD = EXPECTED.slice(FIRST_WORD.length);

const WORKBENCH_TIMEOUT_MS = 60_000;
const READY_TIMEOUT_MS = 180_000;
const SUGGESTION_TIMEOUT_MS = 60_000;
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

async function main() {
  const [url, workspace, outDir] = process.argv.slice(2);
  if (outDir === undefined) {
    throw new Error("usage: node test-real/drive.js URL WORKSPACE OUT_DIR");
  }
  const browser = await chromium.launchPersistentContext(path.join(outDir, "chromium"), {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 720 },
  });
  const page = browser.pages()[0] ?? (await browser.newPage());
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  try {
    await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
    await page.waitForSelector(".monaco-workbench .part.editor", { timeout: WORKBENCH_TIMEOUT_MS });
    console.log(`drive: workbench loaded after ${elapsed()}`);

    // Quick Open, then the file: opening a Python file activates the extension
    await page.keyboard.press("Control+P");
    await page.waitForSelector(".quick-input-widget input", { state: "visible" });
    await page.keyboard.type("pkg/app.py");
    await page.waitForSelector(".quick-input-list .monaco-list-row", { timeout: EDIT_TIMEOUT_MS });
    await page.keyboard.press("Enter");
    await until(
      page,
      "pkg/app.py did not open",
      LINES,
      (lines) => lines.includes("def run(opts):"),
      EDIT_TIMEOUT_MS,
    );

    const ready = await until(
      page,
      "the repomem status-bar item did not say the index was ready",
      STATUS_LABEL,
      (label) => label.includes("index ready"),
      READY_TIMEOUT_MS,
    );
    console.log(`drive: status bar "${ready}" after ${elapsed()}`);

    // line 2 is "    pass": select all but its indentation and type over it
    await page.keyboard.press("Control+G");
    await page.keyboard.type("2");
    await page.keyboard.press("Enter");
    await page.keyboard.press("End");
    await page.keyboard.press("Shift+Home");
    await page.keyboard.type(TYPED, { delay: 30 });
    const typedAt = Date.now();
    const ghost = await until(
      page,
      `no inline suggestion with "${EXPECTED}" appeared`,
      GHOST_TEXT,
      (text) => text.includes(EXPECTED),
      SUGGESTION_TIMEOUT_MS,
    );
    console.log(`drive: ghost text "${ghost}" ${Date.now() - typedAt} ms after typing`);
    const screenshot = path.join(outDir, "ghost-text.png");
    await page.screenshot({ path: screenshot });
    console.log(`drive: screenshot ${screenshot}`);

    // accept-next-word takes "opts" into the line; the rest of the suggestion stays shown
    await page.keyboard.press("Control+ArrowRight");
    const rest = await until(
      page,
      `accepting the next word did not leave "${AFTER_WORD}" shown`,
      GHOST_TEXT,
      (text) => text.includes(AFTER_WORD) && !text.includes(EXPECTED),
      EDIT_TIMEOUT_MS,
    );
    console.log(`drive: Ctrl+Right took "${FIRST_WORD}"; ghost text "${rest}" stays`);

    // Tab takes the suggestion: the line becomes the call from pkg/config.py, closed once
    await page.keyboard.press("Tab");
    await until(page, "Tab left ghost text", GHOST_TEXT, (text) => text === "", EDIT_TIMEOUT_MS);
    await until(
      page,
      `taking the suggestion did not leave line 2 as ${JSON.stringify(ACCEPTED)}`,
      LINES,
      (lines) => lines.includes(ACCEPTED),
      EDIT_TIMEOUT_MS,
    );
    console.log("drive: Tab took the suggestion; line 2 is the call from pkg/config.py");
  } catch (error) {
    const failure = path.join(outDir, "failure.png");
    await page.screenshot({ path: failure }).catch(() => undefined);
    console.error(`drive: after ${elapsed()}; screenshot of the failure: ${failure}`);
    throw error;
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  console.error(`drive: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
