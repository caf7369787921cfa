import assert from "node:assert/strict";
import { createHook } from "node:async_hooks";
import { join } from "node:path";
import { test } from "node:test";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { Ticker } from "../../src/storage/ticker.js";
import { makeBatch, testConfig, withTempDir } from "./helpers.js";

test("appends to 200 logs in one turn are written in one pass and acknowledged in the same turn", async () => {
  await withTempDir(async (dir) => {
    const ticker = new Ticker();
    const config = testConfig({ flush: "interval" });
    const logs: PartitionLog[] = [];
    try {
      for (let i = 0; i < 200; i++) {
        logs.push(await PartitionLog.open(join(dir, String(i)), config, undefined, { ticker }));
      }
      const batch = makeBatch("w", 1);
      let immediates = 0;
      const hook = createHook({
        init(_id, type) {
          if (type === "Immediate") immediates++;
        },
      }).enable();
      // Each acknowledgement notes the turn it came in: the turn counter moves on every check phase.
      let turn = 0;
      const ticking = setInterval(() => turn++, 0);
      const turns = new Set<number>();
      let appends: Promise<unknown>[];
      try {
        appends = logs.map((log) =>
          log.append(batch).then(() => {
            turns.add(turn);
          }),
        );
      } finally {
        hook.disable();
      }
      await Promise.all(appends);
      clearInterval(ticking);
      assert.equal(immediates, 1, `${immediates} setImmediate callbacks for 200 logs' writes`);
      assert.equal(turns.size, 1, `acknowledged over ${turns.size} turns`);
      for (const log of logs) assert.equal(log.logEndOffset, 1);
    } finally {
      await Promise.all(logs.map((log) => log.close()));
    }
  });
});
