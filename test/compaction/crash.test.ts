import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { SWAP_MARKER } from "../../src/storage/compaction/swap.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { runAndKill } from "../storage/kill-writer.js";
import { crashConfig, keyOf, recordValue } from "./fixtures/crash-records.js";
import { readAll, withTempDir } from "./helpers.js";

const WRITER = fileURLToPath(new URL("./fixtures/compact-writer.js", import.meta.url));
const ROUNDS = 16;
/** Stop starting rounds after this long, so the test stays bounded on a loaded machine. */
const BUDGET_MS = 18_000;

interface Round {
  acks: [number, number][];
  removed: number;
  stderr: string;
}

/** Runs the writer on `dir`, SIGKILLs it, and returns what it acknowledged and compacted. */
async function runWriter(dir: string, killAfterMs: number, early: boolean): Promise<Round> {
  const { lines, stderr } = await runAndKill(WRITER, dir, killAfterMs, early);
  const acks: [number, number][] = [];
  let removed = 0;
  for (const line of lines) {
    const ack = /^ack (\d+) (\d+)$/.exec(line);
    if (ack) acks.push([Number(ack[1]), Number(ack[2])]);
    const compacted = /^compacted (\d+)$/.exec(line);
    if (compacted) removed += Number(compacted[1]);
  }
  return { acks, removed, stderr };
}

test("SIGKILL while compacting never loses a key's newest acknowledged record nor breaks the log", async () => {
  await withTempDir(async (dir) => {
    const started = Date.now();
    let seed = 2024;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    /** Per key, the newest offset ever acknowledged. */
    const newestAcked = new Map<string, number>();
    let removed = 0;
    let rounds = 0;
    for (; rounds < ROUNDS && Date.now() - started < BUDGET_MS; rounds++) {
      const early = rounds % 5 === 4;
      const round = await runWriter(dir, Math.floor(random() * (early ? 250 : 400)), early);
      assert.equal(round.stderr, "", "the writer saw no failure");
      removed += round.removed;
      for (const [base, last] of round.acks) {
        for (let o = base; o <= last; o++)
          newestAcked.set(keyOf(o), Math.max(newestAcked.get(keyOf(o)) ?? -1, o));
      }

      const log = await PartitionLog.open(dir, crashConfig);
      try {
        const names = await readdir(dir);
        assert.ok(
          !names.some((n) => n.endsWith(".cleaned") || n === SWAP_MARKER),
          `round ${rounds}: leftovers`,
        );
        let maxAcked = -1;
        for (const o of newestAcked.values()) maxAcked = Math.max(maxAcked, o);
        assert.ok(
          maxAcked < log.logEndOffset,
          `round ${rounds}: acknowledged ${maxAcked}, log ends at ${log.logEndOffset}`,
        );
        // readAll checks CRCs and strictly increasing offsets.
        const records = await readAll(log, 4096);
        const newestStored = new Map<string, number>();
        for (const r of records) {
          const value = recordValue(r.offset);
          if (r.key !== keyOf(r.offset) || (r.value ?? "") !== value) {
            assert.fail(`round ${rounds}: record ${r.offset} is ${r.key}=${r.value}`);
          }
          newestStored.set(r.key, r.offset);
        }
        for (const [key, offset] of newestAcked) {
          const stored = newestStored.get(key) ?? -1;
          assert.ok(
            stored >= offset,
            `round ${rounds}: ${key} acknowledged at ${offset}, newest stored ${stored}`,
          );
        }
      } finally {
        await log.close();
      }
    }
    assert.ok(rounds >= 5, `only ${rounds} rounds fit in the time budget`);
    assert.ok(newestAcked.size > 0, "the writer got appends acknowledged");
    assert.ok(removed > 0, "the writer's compactions removed records");
  });
});
