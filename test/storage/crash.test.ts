import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { readAll, testConfig, withTempDir } from "./helpers.js";
import { runAndKill } from "./kill-writer.js";

const WRITER = fileURLToPath(new URL("./fixtures/crash-writer.js", import.meta.url));
const ROUNDS = 20;
/** Stop starting rounds after this long, so the test stays bounded on a loaded machine. */
const BUDGET_MS = 20_000;

interface Round {
  acks: [number, number][];
  stderr: string;
}

/** Runs the writer on `dir`, SIGKILLs it, and returns what it acknowledged. */
async function runWriter(dir: string, killAfterMs: number, early: boolean): Promise<Round> {
  const { lines, stderr } = await runAndKill(WRITER, dir, killAfterMs, early);
  const acks: [number, number][] = [];
  for (const line of lines) {
    const m = /^ack (\d+) (\d+)$/.exec(line);
    if (m) acks.push([Number(m[1]), Number(m[2])]);
  }
  return { acks, stderr };
}

/**
 * Rounds of the writer killed at random moments, the log opened after each: every acknowledged
 * append is there, whole. `pagesKept` opens as a broker does after a crash in the same boot.
 */
async function killRounds(pagesKept: boolean): Promise<void> {
  await withTempDir(async (dir) => {
    const started = Date.now();
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let totalAcks = 0;
    let rounds = 0;
    for (; rounds < ROUNDS && Date.now() - started < BUDGET_MS; rounds++) {
      const early = rounds % 4 === 3;
      const { acks, stderr } = await runWriter(dir, Math.floor(random() * (early ? 300 : 250)), early);
      assert.equal(stderr, "", "the writer saw no failure");
      totalAcks += acks.length;
      const log = await PartitionLog.open(
        dir,
        testConfig({ segmentBytes: 16 * 1024, indexIntervalBytes: 1024 }),
        undefined,
        { pagesKept },
      );
      try {
        for (const [base, last] of acks) {
          assert.ok(
            last < log.logEndOffset,
            `round ${rounds}: acknowledged ${base}-${last}, log ends at ${log.logEndOffset}`,
          );
        }
        const records = await readAll(log, 64 * 1024);
        assert.equal(records.length, log.logEndOffset);
        for (const [i, r] of records.entries()) {
          if (r.offset !== i || r.value !== `v${i}`)
            assert.fail(`round ${rounds}: record ${i} is ${r.offset} ${r.value}`);
        }
      } finally {
        await log.close();
      }
    }
    assert.ok(rounds >= 5, `only ${rounds} rounds fit in the time budget`);
    assert.ok(totalAcks > 0, "the writer got appends acknowledged");
  });
}

test("SIGKILL at random moments never loses or damages an acknowledged append (flush=sync)", () =>
  killRounds(false));

test("after SIGKILL in the same boot, recovery that trusts the page cache loses no acknowledged append", () =>
  killRounds(true));
