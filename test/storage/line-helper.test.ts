import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { LineHelper } from "../../src/storage/line-helper.js";
import { withTempDir } from "./helpers.js";

test("a request withdrawn before its turn resolves false at once and is never sent", async () => {
  await withTempDir(async (dir) => {
    const seen = join(dir, "seen");
    // Each request takes 0.3 s and is written down when it runs.
    const helper = new LineHelper(`while read -r l; do sleep 0.3; echo "$l" >> '${seen}'; echo ok; done`);
    const first = helper.ask("first");
    const withdraw = new AbortController();
    const second = helper.ask("second", withdraw.signal);
    const third = helper.ask("third");
    const t0 = performance.now();
    withdraw.abort();
    assert.equal(await second, false);
    assert.ok(performance.now() - t0 < 200, "the withdrawn request did not wait for the one running");
    assert.equal(await first, true);
    assert.equal(await third, true);
    assert.equal(await helper.ask("late", AbortSignal.abort()), false, "an aborted signal is not sent");
    assert.deepEqual((await readFile(seen, "utf8")).trim().split("\n"), ["first", "third"]);
  });
});

test("requests are answered in order, one sent at a time", async () => {
  await withTempDir(async (dir) => {
    const seen = join(dir, "seen");
    const helper = new LineHelper(
      `while read -r l; do echo "$l" >> '${seen}'; if [ "$l" = bad ]; then echo no; else echo ok; fi; done`,
    );
    const answers = await Promise.all(["a", "bad", "c"].map((line) => helper.ask(line)));
    assert.deepEqual(answers, [true, false, true]);
    assert.deepEqual((await readFile(seen, "utf8")).trim().split("\n"), ["a", "bad", "c"]);
  });
});
