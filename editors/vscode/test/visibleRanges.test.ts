import * as assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import {
  type ShownEditor,
  VISIBLE_RANGES,
  type VisibleRangesParams,
  VisibleRangesSender,
  visibleRangesParams,
} from "../src/visibleRanges";

function editor(uri: string, ...ranges: [number, number][]): ShownEditor {
  const scheme = uri.slice(0, uri.indexOf(":"));
  return {
    document: { uri: { scheme, toString: () => uri } },
    visibleRanges: ranges.map(([start, end]) => ({ start: { line: start }, end: { line: end } })),
  };
}

describe("visibleRangesParams", () => {
  it("names the document and its visible lines, end line included", () => {
    assert.equal(VISIBLE_RANGES, "repomem/visibleRanges");
    assert.deepEqual(visibleRangesParams(editor("file:///r/a.py", [3, 40], [90, 99])), {
      uri: "file:///r/a.py",
      ranges: [
        { start: { line: 3, character: 0 }, end: { line: 40, character: 0 } },
        { start: { line: 90, character: 0 }, end: { line: 99, character: 0 } },
      ],
    });
  });
});

describe("VisibleRangesSender", () => {
  it("sends each document's last position once per throttle interval", () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const sent: VisibleRangesParams[] = [];
      const sender = new VisibleRangesSender((params) => sent.push(params), 200);
      sender.update(editor("file:///r/a.py", [0, 30]));
      sender.update(editor("file:///r/a.py", [10, 40]));
      sender.update(editor("file:///r/b.py", [5, 20]));
      assert.equal(sent.length, 0);
      mock.timers.tick(200);
      assert.deepEqual(
        sent.map((p) => [p.uri, p.ranges[0].start.line]),
        [
          ["file:///r/a.py", 10],
          ["file:///r/b.py", 5],
        ],
      );
      sender.update(editor("file:///r/a.py", [50, 80]));
      mock.timers.tick(199);
      assert.equal(sent.length, 2);
      mock.timers.tick(1);
      assert.equal(sent[2].ranges[0].start.line, 50);
    } finally {
      mock.timers.reset();
    }
  });

  it("ignores documents that are not files, editors showing nothing, and stops on dispose", () => {
    mock.timers.enable({ apis: ["setTimeout"] });
    try {
      const sent: VisibleRangesParams[] = [];
      const sender = new VisibleRangesSender((params) => sent.push(params), 200);
      sender.update(undefined);
      sender.update(editor("untitled:Untitled-1", [0, 10]));
      sender.update(editor("output:repomem", [0, 10]));
      sender.update(editor("file:///r/a.py"));
      sender.update(editor("file:///r/c.py", [0, 10]));
      sender.dispose();
      mock.timers.tick(1000);
      assert.deepEqual(sent, []);
    } finally {
      mock.timers.reset();
    }
  });
});
