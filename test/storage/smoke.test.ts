import assert from "node:assert/strict";
import { test } from "node:test";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, offsetsOf, range, readAll, testConfig, withTempDir } from "./helpers.js";

test("smoke: append, read, reopen", async () => {
  await withTempDir(async (dir) => {
    const log = await PartitionLog.open(dir, testConfig());
    const results = [];
    for (let i = 0; i < 2000; i++) results.push(log.append(makeBatch(`b${i}`, 3)));
    const acks = await Promise.all(results);
    assert.deepEqual(acks[0], { baseOffset: 0, lastOffset: 2 });
    assert.deepEqual(acks[1999], { baseOffset: 5997, lastOffset: 5999 });
    const all = await readAll(log);
    assert.deepEqual(offsetsOf(all), range(0, 6000));
    assert.equal(all[4]?.value, "b1-1");
    await log.close();
    const again = await PartitionLog.open(dir, testConfig());
    assert.equal(again.logEndOffset, 6000);
    const back = await readAll(again);
    assert.deepEqual(offsetsOf(back), range(0, 6000));
    await again.close();
  });
});
