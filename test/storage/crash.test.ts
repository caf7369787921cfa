import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { readAll, testConfig, withTempDir } from "./helpers.js";

const WRITER = fileURLToPath(new URL("./fixtures/crash-writer.js", import.meta.url));
const ROUNDS = 20;
/** Stop starting rounds after this long, so the test stays bounded on a loaded machine. */
const BUDGET_MS = 20_000;

interface Round {
  acks: [number, number][];
  stderr: string;
}

/**
 * Runs the writer on `dir` and kills it with SIGKILL `killAfterMs` after it is ready, or after it
 * starts when `early` (so some kills land while it opens and recovers the log); returns what it
 * acknowledged.
 */
function runWriter(dir: string, killAfterMs: number, early: boolean): Promise<Round> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, dir], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let stderr = "";
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      timer ??= setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    };
    if (early) arm();
    child.stdout.setEncoding("utf8").on("data", (s: string) => {
      out += s;
      if (out.startsWith("ready")) arm();
    });
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.once("error", reject);
    child.once("close", () => {
      clearTimeout(timer);
      const acks: [number, number][] = [];
      // Only whole lines count: the last one may have been cut by the kill.
      for (const line of out.split("\n").slice(0, -1)) {
        const m = /^ack (\d+) (\d+)$/.exec(line);
        if (m) acks.push([Number(m[1]), Number(m[2])]);
      }
      resolve({ acks, stderr });
    });
  });
}

test("SIGKILL at random moments never loses or damages an acknowledged append (flush=sync)", async () => {
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
});
