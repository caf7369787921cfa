/**
 * Repeated failures log a bounded number of lines (one per kind per interval, then how many were
 * left out), pipelined joins do not pile listeners on the connection's signal, and a disk that
 * fails a CreateTopic answers STORAGE_ERROR rather than INTERNAL.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import { test } from "node:test";
import { pino } from "pino";
import { ErrorCode } from "../../src/format/errors.js";
import * as p from "../../src/protocol/index.js";
import { LogLimiter } from "../../src/storage/log-limiter.js";
import { PartitionLog } from "../../src/storage/partition-log.js";
import { collectWarnings, startServer, TestClient, until } from "../server/helpers.js";
import { TestFileOps } from "../storage/file-ops-fakes.js";
import { makeBatch, testConfig, withTempDir } from "../storage/helpers.js";

interface Line {
  level: number;
  msg: string;
}

/** A pino logger that keeps its lines. */
function capture(): { logger: pino.Logger; lines: Line[] } {
  const lines: Line[] = [];
  const logger = pino({ level: "info" }, { write: (s: string) => lines.push(JSON.parse(s) as Line) });
  return { logger, lines };
}

function enospc(): Error {
  return Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC", errno: -28 });
}

/** Every write fails: a full disk. */
class FullDisk extends TestFileOps {
  override async writev(_file: FileHandle, _buffers: Buffer[], _position: number): Promise<number> {
    throw enospc();
  }
}

test("a full disk logs a bounded number of lines however many writes fail", async () => {
  await withTempDir(async (dir) => {
    const { logger, lines } = capture();
    const log = await PartitionLog.open(dir, testConfig(), logger, { fileOps: new FullDisk() });
    let failed = 0;
    for (let i = 0; i < 200; i++) await log.append(makeBatch(`b${i}`, 1)).catch(() => failed++);
    assert.equal(failed, 200);
    const errors = lines.filter((l) => l.level >= 50);
    assert.ok(errors.length >= 1, "the failure is logged");
    assert.ok(errors.length <= 3, `${errors.length} error lines for 200 failed writes`);
    await log.close().catch(() => {});
  });
});

test("malformed connections log a bounded number of warnings", { timeout: 20_000 }, async (t) => {
  const { logger, lines } = capture();
  const f = await startServer(t, {}, { logger });
  const oversize = Buffer.alloc(4);
  oversize.writeUInt32BE(0xffff_fff0, 0);
  for (let i = 0; i < 50; i++) {
    const c = await TestClient.connect(f.port);
    c.send(oversize);
    await c.closed;
  }
  const warnings = lines.filter((l) => l.level >= 40);
  assert.ok(warnings.length >= 1, "the first is logged");
  assert.ok(warnings.length <= 3, `${warnings.length} warnings for 50 malformed connections`);
});

test("20 pipelined JoinGroups on one connection emit no warning", { timeout: 20_000 }, async (t) => {
  const warnings = collectWarnings(t);
  const f = await startServer(t);
  await f.broker.createTopic("joined", 1);
  const c = await f.client();
  const frames: Buffer[] = [];
  for (let i = 0; i < 20; i++) {
    // New members of one group: all but the first wait for a rebalance the first never joins.
    frames.push(
      p.encodeJoinGroupRequest(c.id(), {
        group: "crowd",
        memberId: "",
        clientId: `m${i}`,
        topics: ["joined"],
        strategy: "range",
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 60_000,
      }),
    );
  }
  c.send(Buffer.concat(frames));
  await c.next(); // the first member's join completes at once
  const conn = f.server.connections().at(-1)!;
  for (let i = 0; i < 100 && conn.inflight < 19; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(conn.inflight, 19, "19 joins wait");
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(warnings, []);
});

test("CreateTopic on a failing disk answers STORAGE_ERROR", { timeout: 20_000 }, async (t) => {
  const f = await startServer(t);
  const c = await f.client();
  const fsp = fs.promises as unknown as Record<string, unknown>;
  const saved = { mkdir: fsp.mkdir, open: fsp.open, writeFile: fsp.writeFile };
  const fail = async (): Promise<never> => {
    throw enospc();
  };
  fsp.mkdir = fail;
  fsp.open = fail;
  fsp.writeFile = fail;
  syncBuiltinESMExports();
  let answer: Buffer;
  try {
    answer = await c.call((id) =>
      p.encodeCreateTopicRequest(id, { topic: "nospace", partitions: 1, configs: {} }),
    );
  } finally {
    Object.assign(fsp, saved);
    syncBuiltinESMExports();
  }
  assert.equal(p.responseError(answer)?.code, ErrorCode.STORAGE_ERROR, p.responseError(answer)?.message);
  // The disk is back: the same create succeeds.
  const again = await c.call((id) =>
    p.encodeCreateTopicRequest(id, { topic: "nospace", partitions: 1, configs: {} }),
  );
  assert.equal(p.responseError(again), null);
});

test("the limiter writes the first line of a kind, then how many it left out", async () => {
  const { logger, lines } = capture();
  const limiter = new LogLimiter(50);
  for (let i = 0; i < 10; i++) limiter.log(logger, "warn", "same", { i }, "disk full");
  limiter.log(logger, "warn", "other", {}, "another kind");
  assert.deepEqual(
    lines.map((l) => l.msg),
    ["disk full", "another kind"],
  );
  await until(() => lines.length === 3, "the summary line");
  assert.equal(lines[2]!.msg, "disk full (repeated 9 times in 0.05 s)");
  assert.equal((lines[2] as Line & { repeated: number }).repeated, 9);
});
