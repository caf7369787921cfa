import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { test } from "node:test";
import { LineSplitter } from "../../src/cli/line-splitter.js";
import { collect, runConch, spawnConch, useSharedBroker } from "./cli-harness.js";

const MESSAGES = 1_000_000;
const LINES_PER_CHUNK = 2_000;

/** Line i: its number and a filler of varying length, so batches and chunks split at odd places. */
function line(i: number): string {
  return `message ${i} ${"abcdefghijklmnopqrstuvwxyz0123456789".slice(0, i % 37)}`;
}

/** stdin for `conch produce`: generated as it is read, never held whole. */
function generatedInput(count: number, hash: ReturnType<typeof createHash>): Readable {
  let next = 0;
  return new Readable({
    read() {
      if (next >= count) {
        this.push(null);
        return;
      }
      const end = Math.min(count, next + LINES_PER_CHUNK);
      let text = "";
      for (; next < end; next++) text += `${line(next)}\n`;
      hash.update(text);
      this.push(text);
    },
  });
}

const shared = useSharedBroker();

test(`${MESSAGES} lines through conch produce and conch consume: each once, in order`, async () => {
  const b = ["--broker", shared.broker.address];
  assert.equal((await runConch(["topic", "create", "million", ...b])).code, 0);

  const sent = createHash("sha256");
  const produced = await runConch(["produce", "million", ...b], {
    input: generatedInput(MESSAGES, sent),
    killAfterMs: 240_000,
  });
  assert.equal(produced.code, 0, produced.stderr);
  assert.equal(produced.stdout, `${MESSAGES} messages acknowledged\n`);

  const consumer = spawnConch([
    "consume",
    "million",
    "--format",
    "value",
    "--max-messages",
    `${MESSAGES}`,
    ...b,
  ]);
  const received = createHash("sha256");
  const splitter = new LineSplitter();
  let count = 0;
  let firstMismatch: string | null = null;
  const onLine = (buf: Buffer, start: number, end: number): void => {
    if (firstMismatch === null) {
      const got = buf.toString("utf8", start, end);
      if (got !== line(count)) firstMismatch = `line ${count}: got "${got}", expected "${line(count)}"`;
    }
    count++;
  };
  consumer.stdout!.on("data", (chunk: Buffer) => {
    received.update(chunk);
    splitter.push(chunk, onLine);
  });
  const done = await collect(consumer, 240_000, false);
  splitter.end(onLine);
  assert.equal(done.code, 0, done.stderr);
  assert.equal(firstMismatch, null);
  assert.equal(count, MESSAGES);
  assert.equal(received.digest("hex"), sent.digest("hex"));
});
