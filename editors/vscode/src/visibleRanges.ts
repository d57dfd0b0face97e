/**
 * Tells the server which lines of each document are on screen (`repomem/visibleRanges`), so
 * that code the user is looking at can reach the prompt of a completion in another file. Sent
 * when an editor's visible ranges change or another editor becomes active, at most once per
 * `THROTTLE_MS` per document (the last position wins).
 */
import type * as vscode from "vscode";

export const VISIBLE_RANGES = "repomem/visibleRanges";
export const THROTTLE_MS = 200;

interface LinePosition {
  line: number;
  character: number;
}

export interface VisibleRangesParams {
  uri: string;
  /** the visible lines, 0-based, end line included */
  ranges: { start: LinePosition; end: LinePosition }[];
}

/** What is read of an editor: its document's URI and its visible ranges. */
export type ShownEditor = {
  document: { uri: Pick<vscode.Uri, "scheme" | "toString"> };
  visibleRanges: readonly { start: { line: number }; end: { line: number } }[];
};

/** The notification's params for `editor`. */
export function visibleRangesParams(editor: ShownEditor): VisibleRangesParams {
  return {
    uri: editor.document.uri.toString(),
    ranges: editor.visibleRanges.map((range) => ({
      start: { line: range.start.line, character: 0 },
      end: { line: range.end.line, character: 0 },
    })),
  };
}

/** Sends the visible ranges of the editors it is told about, throttled per document. */
export class VisibleRangesSender {
  private readonly timers = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly latest = new Map<string, VisibleRangesParams>();

  constructor(
    private readonly send: (params: VisibleRangesParams) => void,
    private readonly throttleMs = THROTTLE_MS,
  ) {}

  /** `editor` shows other lines (or became active): send them once the throttle allows. */
  update(editor: ShownEditor | undefined): void {
    if (editor === undefined || editor.document.uri.scheme !== "file") {
      return;
    }
    const params = visibleRangesParams(editor);
    if (params.ranges.length === 0) {
      return;
    }
    this.latest.set(params.uri, params);
    if (this.timers.has(params.uri)) {
      return;
    }
    const timer = setTimeout(() => {
      this.timers.delete(params.uri);
      const last = this.latest.get(params.uri);
      this.latest.delete(params.uri);
      if (last !== undefined) {
        this.send(last);
      }
    }, this.throttleMs);
    this.timers.set(params.uri, timer);
  }

  dispose(): void {
    for (const timer of this.timers.values()) {
      clearTimeout(timer);
    }
    this.timers.clear();
    this.latest.clear();
  }
}
