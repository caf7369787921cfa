import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { LineHelper, startLineHelpers } from "../../src/storage/line-helper.js";
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

test("startLineHelpers starts every helper's process before any request", async () => {
  await withTempDir(async (dir) => {
    const started = join(dir, "started");
    const helper = new LineHelper(`echo up > '${started}'; while read -r l; do echo ok; done`);
    assert.equal(helper.running, false, "nothing runs before a request or a start");
    startLineHelpers();
    assert.equal(helper.running, true);
    // The script's first line ran without a request sent: the process is up.
    for (let i = 0; i < 100 && (await readFile(started, "utf8").catch(() => "")) === ""; i++) await sleep(20);
    assert.equal((await readFile(started, "utf8")).trim(), "up");
    startLineHelpers();
    assert.equal(await helper.ask("x"), true, "a second start changed nothing");
  });
});
