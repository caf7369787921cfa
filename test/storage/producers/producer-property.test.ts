/**
 * Property: however a producer's batches and their retries interleave (sent in any order within
 * its window of five unacknowledged batches, several in the same tick, answers lost on the way
 * back), the partition stores each batch exactly once, in sequence order, and every success
 * answer for a batch names the same offsets.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import fc from "fast-check";
import { ConchError, ErrorCode } from "../../../src/format/errors.js";
import { PartitionLog } from "../../../src/storage/partition-log.js";
import type { AppendResult } from "../../../src/storage/pending-append.js";
import { readAll, testConfig, withTempDir } from "../helpers.js";
import { producerBatch } from "./producer-batches.js";

const BATCHES = 12;
const WINDOW = 5;

/** One tick: deliveries of batches picked in the window (an index into it), answers kept or lost. */
const tick = fc.array(fc.record({ pick: fc.nat(WINDOW - 1), lose: fc.boolean() }), {
  minLength: 1,
  maxLength: 4,
});

test("any interleaving of retries stores each batch once and in order", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(tick, { minLength: 1, maxLength: 30 }), fc.nat(3), async (ticks, sizeSeed) => {
      await withTempDir(async (dir) => {
        const log = await PartitionLog.open(dir, testConfig({ segmentBytes: 1024 }));
        try {
          const sizes = Array.from({ length: BATCHES }, (_, i) => 1 + ((i + sizeSeed) % 3));
          const firstSeq: number[] = [];
          for (let i = 0, s = 0; i < BATCHES; s += sizes[i]!, i++) firstSeq.push(s);
          const acked = new Array<boolean>(BATCHES).fill(false);
          const answers = new Map<number, string>();
          const deliver = async (i: number, lose: boolean): Promise<void> => {
            let r: AppendResult;
            try {
              r = await log.append(producerBatch(3, 0, firstSeq[i]!, sizes[i]!, `b${i}`));
            } catch (err) {
              // A batch ahead of one not yet stored (before the first one is, the producer is not
              // known yet): the producer sends it again later.
              assert.ok(
                err instanceof ConchError &&
                  (err.code === ErrorCode.OUT_OF_ORDER_SEQUENCE ||
                    err.code === ErrorCode.UNKNOWN_PRODUCER_ID),
                String(err),
              );
              return;
            }
            const offsets = `${r.baseOffset}-${r.lastOffset}`;
            const before = answers.get(i);
            assert.ok(before === undefined || before === offsets, `batch ${i}: ${before} then ${offsets}`);
            answers.set(i, offsets);
            if (!lose) acked[i] = true;
          };
          const window = (): number[] => {
            const open: number[] = [];
            for (let i = 0; i < BATCHES && open.length < WINDOW; i++) if (!acked[i]) open.push(i);
            // The window is the next five unacknowledged batches after the first one.
            const first = open[0];
            return first === undefined ? [] : open.filter((i) => i < first + WINDOW);
          };
          for (const t of ticks) {
            const w = window();
            if (w.length === 0) break;
            await Promise.all(t.map(({ pick, lose }) => deliver(w[pick % w.length]!, lose)));
          }
          // Then the producer sends what is left in order, until everything is acknowledged.
          for (let i = 0; i < BATCHES; i++) if (!acked[i]) await deliver(i, false);
          const values = (await readAll(log, 1 << 16)).map((r) => r.value);
          const expected = sizes.flatMap((n, i) => Array.from({ length: n }, (_, j) => `b${i}-${j}`));
          assert.deepEqual(values, expected);
        } finally {
          await log.close();
        }
      });
    }),
    { numRuns: 40 },
  );
});
