import assert from "node:assert/strict";
import { test } from "node:test";
import { indexOfIn, LineSplitter } from "../../src/cli/line-splitter.js";

function split(chunks: string[]): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter();
  const onLine = (buf: Buffer, start: number, end: number): void => {
    lines.push(buf.toString("utf8", start, end));
  };
  for (const c of chunks) splitter.push(Buffer.from(c), onLine);
  splitter.end(onLine);
  return lines;
}

test("lines within one chunk, with and without a final newline", () => {
  assert.deepEqual(split(["a\nbb\nccc\n"]), ["a", "bb", "ccc"]);
  assert.deepEqual(split(["a\nbb\nccc"]), ["a", "bb", "ccc"]);
});

test("empty lines are lines; CRLF loses its CR", () => {
  assert.deepEqual(split(["\n\nx\r\n\r\n"]), ["", "", "x", ""]);
});

test("a line split across many chunks is joined once", () => {
  assert.deepEqual(split(["he", "ll", "o\nwor", "ld", "\n", "!"]), ["hello", "world", "!"]);
});

test("every split point of a text gives the same lines", () => {
  const text = "alpha\nbeta\r\n\ngamma delta\nε-utf8\n";
  const expected = split([text]);
  const bytes = Buffer.from(text);
  for (let i = 0; i <= bytes.length; i++) {
    for (let j = i; j <= bytes.length; j += 3) {
      const lines: string[] = [];
      const s = new LineSplitter();
      const onLine = (b: Buffer, st: number, en: number): void => {
        lines.push(b.toString("utf8", st, en));
      };
      s.push(bytes.subarray(0, i), onLine);
      s.push(bytes.subarray(i, j), onLine);
      s.push(bytes.subarray(j), onLine);
      s.end(onLine);
      assert.deepEqual(lines, expected, `split at ${i}, ${j}`);
    }
  }
});

test("indexOfIn looks only inside the range", () => {
  const buf = Buffer.from("k1::v1|k2::v2");
  const sep = Buffer.from("::");
  assert.equal(indexOfIn(buf, sep, 0, 6), 2);
  assert.equal(indexOfIn(buf, sep, 7, 13), 9);
  assert.equal(indexOfIn(buf, sep, 0, 3), -1, "a separator crossing the end does not count");
  assert.equal(indexOfIn(buf, Buffer.from("|"), 0, 6), -1);
});
