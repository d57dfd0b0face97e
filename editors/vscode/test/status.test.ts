import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { IndexStatus, StatusBar } from "../src/status";
import { type FakeStatusBarItem, StatusBarAlignment, statusBarItems, ThemeColor } from "./fakeVscode";

/** A status machine drawing into a fresh fake status-bar item. */
function setUp(): { status: IndexStatus; item: FakeStatusBarItem } {
  const bar = new StatusBar("repomem.showOutput");
  const item = statusBarItems[statusBarItems.length - 1];
  assert.equal(bar.item, item as unknown);
  return { status: new IndexStatus((view) => bar.show(view)), item };
}

describe("StatusBar", () => {
  it("is a right-aligned item that opens the output", () => {
    const { item } = setUp();
    assert.equal(item.alignment, StatusBarAlignment.Right);
    assert.equal(item.command, "repomem.showOutput");
    assert.equal(item.name, "repomem");
  });
});

describe("IndexStatus", () => {
  it("goes from starting through indexing progress to ready", () => {
    const { status, item } = setUp();
    status.starting();
    assert.equal(item.visible, true);
    assert.equal(item.text, "$(loading~spin) repomem");
    status.running();
    assert.equal(item.text, "$(sync~spin) repomem");
    assert.match(item.tooltip ?? "", /waiting for the index/);

    status.progress("index-1", { kind: "begin", title: "repomem: indexing", percentage: 0 });
    assert.equal(item.text, "$(sync~spin) repomem 0%");
    status.progress("index-1", { kind: "report", message: "parse 3/7", percentage: 41.6 });
    assert.equal(item.text, "$(sync~spin) repomem 42%");
    assert.equal(item.tooltip, "repomem: indexing: parse 3/7");
    status.progress("index-1", { kind: "report", percentage: 80 });
    assert.equal(item.tooltip, "repomem: indexing: parse 3/7");
    status.progress("index-1", { kind: "end" });
    assert.equal(item.text, "$(sync~spin) repomem", "ended but not ready yet");

    status.indexReady({ files: 7, fragments: 31 });
    assert.equal(item.text, "$(check) repomem");
    assert.equal(item.tooltip, "repomem: index ready (7 files, 31 fragments)");
    assert.equal(item.backgroundColor, undefined);
  });

  it("shows the newest of several running tasks, and ready once all have ended", () => {
    const { status, item } = setUp();
    status.running();
    status.indexReady({});
    assert.equal(item.text, "$(check) repomem");
    assert.equal(item.tooltip, "repomem: index ready");
    status.progress(1, { kind: "begin", title: "repomem: indexing", percentage: 10 });
    status.progress("2", { kind: "begin", title: "repomem: updating pkg/util.py" });
    assert.equal(item.text, "$(sync~spin) repomem");
    assert.equal(item.tooltip, "repomem: updating pkg/util.py");
    status.progress("2", { kind: "end" });
    assert.equal(item.text, "$(sync~spin) repomem 10%");
    status.progress(1, { kind: "end" });
    assert.equal(item.text, "$(check) repomem");
  });

  it("names each folder of a multi-root workspace once its index is ready", () => {
    const { status, item } = setUp();
    status.running();
    status.indexReady({ root: "/work/app", files: 7, fragments: 31 });
    assert.equal(item.tooltip, "repomem: index ready (7 files, 31 fragments)");
    status.indexReady({ root: "/work/lib", files: 2, fragments: 5 });
    status.indexReady({ root: "/work/app", files: 8, fragments: 33 });
    assert.equal(item.text, "$(check) repomem");
    assert.equal(
      item.tooltip,
      "repomem: index ready for app (8 files, 33 fragments), lib (2 files, 5 fragments)",
    );
  });

  it("ignores reports for tasks that never began", () => {
    const { status, item } = setUp();
    status.running();
    status.indexReady({ files: 1 });
    status.progress("stray", { kind: "report", percentage: 50 });
    assert.equal(item.text, "$(check) repomem");
  });

  it("shows completions switched off once the index is ready", () => {
    const { status, item } = setUp();
    status.running();
    status.setEnabled(false);
    assert.equal(item.text, "$(sync~spin) repomem", "indexing goes on while disabled");
    status.indexReady({ files: 2 });
    assert.equal(item.text, "$(circle-slash) repomem");
    assert.match(item.tooltip ?? "", /completions are off \(repomem\.enable\)/);
    status.setEnabled(true);
    assert.equal(item.text, "$(check) repomem");
  });

  it("forgets the index and its tasks when the server restarts", () => {
    const { status, item } = setUp();
    status.running();
    status.progress("t", { kind: "begin", title: "repomem: indexing" });
    status.indexReady({ files: 3 });
    status.starting();
    status.running();
    assert.equal(item.text, "$(sync~spin) repomem");
    assert.match(item.tooltip ?? "", /waiting for the index/);
  });

  it("draws a stopped or failed server on the error background", () => {
    const { status, item } = setUp();
    status.running();
    status.progress("t", { kind: "begin", title: "repomem: indexing" });
    status.stopped();
    assert.equal(item.text, "$(debug-stop) repomem");
    assert.ok(item.backgroundColor instanceof ThemeColor);
    assert.equal(item.backgroundColor.id, "statusBarItem.errorBackground");

    status.failed('"repomem" was not found on PATH');
    assert.equal(item.text, "$(error) repomem");
    assert.match(item.tooltip ?? "", /^repomem: "repomem" was not found on PATH/);

    status.starting();
    assert.equal(item.backgroundColor, undefined);
  });
});
