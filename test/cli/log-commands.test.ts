/** `conch log verify|repair`: offline checks that find damage, plan repairs, and refuse a live broker's directory. */
import assert from "node:assert/strict";
import { access, appendFile, mkdir, readdir, readFile, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { batchBaseOffset, batchCount } from "../../src/format/batch-header.js";
import { compressBatch } from "../../src/format/compressed-batch.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { makeBatch, testConfig } from "../storage/helpers.js";
import { removeDir, runConch, tempDir } from "./cli-harness.js";

/** A data dir with topic t, partition 0 of several closed segments; returns the partition dir and its .wal names. */
async function dataDir(t: {
  after: (fn: () => void) => void;
}): Promise<{ root: string; part: string; wals: string[] }> {
  const root = tempDir();
  t.after(() => removeDir(root));
  const part = join(root, "topics", "t", "0");
  await mkdir(part, { recursive: true });
  const log = await PartitionLog.open(part, testConfig({ segmentBytes: 4096, indexIntervalBytes: 300 }));
  for (let i = 0; i < 80; i++) await log.append(makeBatch(`v${i}`, 3));
  await log.close();
  return { root, part, wals: (await readdir(part)).filter((n) => n.endsWith(".wal")).sort() };
}

async function flipNearEnd(path: string): Promise<void> {
  const bytes = await readFile(path);
  bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0x01;
  await writeFile(path, bytes);
}

test("log verify: compressed batches of every codec pass, and a flipped bit in one is damage", async (t) => {
  const root = tempDir();
  t.after(() => removeDir(root));
  const part = join(root, "topics", "z", "0");
  await mkdir(part, { recursive: true });
  const log = await PartitionLog.open(part, testConfig({ segmentBytes: 4096, indexIntervalBytes: 300 }));
  const b = new BatchBuilder({ slabBytes: 1 << 16 });
  for (let i = 0; i < 40; i++) {
    for (let r = 0; r < 10; r++) b.add(`value ${i} ${r}`, `key ${r}`, 1_700_000_000_000 + i);
    await log.append(compressBatch(b.finish(), ((i % 4) + 1) as 1 | 2 | 3 | 4));
  }
  await log.close();
  const ok = await runConch(["log", "verify", root]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.equal(ok.stdout, "");
  const wals = (await readdir(part)).filter((n) => n.endsWith(".wal")).sort();
  await flipNearEnd(join(part, wals[0]!));
  const bad = await runConch(["log", "verify", root]);
  assert.equal(bad.code, 1);
  assert.match(bad.stdout, /^z\/0 \S+ damaged bytes .*: batch CRC32C mismatch$/m);
});

test("log verify: a healthy data dir passes; a flipped bit, a missing index and a torn tail are found, exit 1", async (t) => {
  const { root, part, wals } = await dataDir(t);
  const ok = await runConch(["log", "verify", root]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.equal(ok.stdout, "");

  await flipNearEnd(join(part, wals[0]!));
  await unlink(join(part, wals[1]!.replace(".wal", ".idx")));
  await appendFile(join(part, wals.at(-1)!), Buffer.from([0xc1, 1, 2, 3]));
  const bad = await runConch(["log", "verify", root]);
  assert.equal(bad.code, 1);
  assert.match(
    bad.stdout,
    new RegExp(`^t/0 ${wals[0]} damaged bytes \\d+-\\d+ offsets \\d+-\\d+: batch CRC32C mismatch$`, "m"),
  );
  assert.match(bad.stdout, new RegExp(`^t/0 ${wals[1]!.replace(".wal", ".idx")} index-missing`, "m"));
  assert.match(bad.stdout, new RegExp(`^t/0 ${wals.at(-1)} torn-tail`, "m"));
  assert.match(bad.stderr, /3 problem/);
});

test("log repair shows its plan, changes nothing without --yes, and with it cuts the torn tail and rebuilds the index", async (t) => {
  const { root, part, wals } = await dataDir(t);
  await flipNearEnd(join(part, wals[0]!));
  const idx = join(part, wals[1]!.replace(".wal", ".idx"));
  await unlink(idx);
  const last = join(part, wals.at(-1)!);
  const lastSize = (await stat(last)).size;
  await appendFile(last, Buffer.from([0xc1, 1, 2, 3]));

  const plan = await runConch(["log", "repair", root]);
  assert.equal(plan.code, 0, plan.stderr);
  assert.match(plan.stdout, /damaged .* -> keep it quarantined/);
  assert.match(plan.stdout, /index-missing.* -> rebuild it/);
  assert.match(plan.stdout, /torn-tail.* -> cut the file there/);
  assert.match(plan.stderr, /dry run: 2 repair/);
  await assert.rejects(access(idx), "nothing changed without --yes");
  assert.equal((await stat(last)).size, lastSize + 4);

  const done = await runConch(["log", "repair", root, "--yes"]);
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stderr, /1 damaged range\(s\) stay quarantined/);
  await access(idx);
  assert.equal((await stat(last)).size, lastSize);
  assert.deepEqual(
    (await readdir(part)).filter((n) => n.endsWith(".wal")).sort(),
    wals,
    "no segment deleted",
  );
  const after = await runConch(["log", "verify", root]);
  assert.equal(after.code, 1, "the damage is still there, quarantined");
  assert.equal(after.stdout.trim().split("\n").length, 1);
});

test("log verify and repair refuse a data dir that a live broker holds", async (t) => {
  const { root } = await dataDir(t);
  await writeFile(join(root, "conch.lock"), `${process.pid}\n`);
  for (const args of [
    ["log", "verify", root],
    ["log", "repair", root, "--yes"],
  ]) {
    const r = await runConch(args);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /in use by process/);
  }
  assert.equal(
    await readFile(join(root, "conch.lock"), "utf8"),
    `${process.pid}\n`,
    "the lock is left alone",
  );
});

for (const where of ["in the middle of", "at the end of"] as const) {
  test(`log repair --drop-damaged, damage ${where} a segment: plans the drop, and with --yes removes the bad bytes; good batches keep their offsets, reads skip the gap`, async (t) => {
    const { root, part, wals } = await dataDir(t);
    const damaged = join(part, wals[1]!);
    const before = await readFile(damaged);
    const back = where === "at the end of" ? 100 : Math.floor(before.length / 2);
    const flipped = Buffer.from(before);
    flipped[before.length - back] = flipped[before.length - back]! ^ 0x01;
    await writeFile(damaged, flipped);
    await unlink(damaged.replace(".wal", ".idx"));

    const plan = await runConch(["log", "repair", root, "--drop-damaged"]);
    assert.equal(plan.code, 0, plan.stderr);
    const m =
      /damaged bytes (\d+)-(\d+) offsets (\d+)-(\d+): .* -> drop it \(remove its \d+ bytes; offsets \d+-\d+ become a gap that reads skip\)/.exec(
        plan.stdout,
      );
    assert.ok(m, plan.stdout);
    const [from, to, first, last] = m.slice(1).map(Number) as [number, number, number, number];
    assert.match(plan.stderr, /dry run: 1 repair/);
    assert.deepEqual(
      await readFile(damaged).then((b) => b.length),
      before.length,
      "nothing changed without --yes",
    );

    const done = await runConch(["log", "repair", root, "--drop-damaged", "--yes"]);
    assert.equal(done.code, 0, done.stderr);
    assert.match(done.stderr, /0 damaged range\(s\) stay quarantined/);
    const after = await readFile(damaged);
    assert.deepEqual(after, Buffer.concat([before.subarray(0, from), before.subarray(to)]));
    assert.match(await readFile(join(part, "dropped.offsets"), "utf8"), new RegExp(`^${first} ${last}\n$`));
    const verify = await runConch(["log", "verify", root]);
    assert.equal(verify.code, 0, verify.stdout);
    assert.deepEqual((await readdir(part)).filter((n) => n.endsWith(".wal")).sort(), wals);

    const log = await PartitionLog.open(part, testConfig({ segmentBytes: 4096, indexIntervalBytes: 300 }));
    try {
      assert.equal(log.quarantined().length, 0);
      assert.equal(log.logEndOffset, 240, "every good batch keeps its offset");
      const across = await log.read(first, 1);
      assert.equal(batchBaseOffset(across.records, 0), last + 1, "a read in the gap gets the batch after it");
      const offsets = [];
      for (let o = 0; o < 240; ) {
        const { records } = await log.read(o, 1);
        offsets.push(batchBaseOffset(records, 0));
        o = batchBaseOffset(records, 0) + batchCount(records, 0);
      }
      assert.deepEqual(
        offsets,
        Array.from({ length: 80 }, (_, i) => i * 3).filter((o) => o < first || o > last),
      );
    } finally {
      await log.close();
    }
  });
}
