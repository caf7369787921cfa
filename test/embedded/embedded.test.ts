import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { Conch } from "../../src/embedded/conch.js";
import { type ConchError, ErrorCode } from "../../src/format/errors.js";
import * as Package from "../../src/index.js";

test("the package exports the client with embedded mode, and createClient makes one", () => {
  assert.equal(Package.Conch, Conch);
  assert.ok(Package.createClient({ brokers: ["127.0.0.1:1"] }) instanceof Package.Conch);
});

test("embedded mode: a broker in this process, same API, data kept across restarts", {
  timeout: 60_000,
}, async (t) => {
  const dataDir = await mkdtemp(join(tmpdir(), "conch-embedded-"));
  t.after(() => rm(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  const first = await Conch.embedded({ dataDir, flush: "sync", clientId: "embedded-test" });
  assert.match(first.brokers[0]!, /^127\.0\.0\.1:\d+$/);
  await first.admin().createTopic("kept");
  const r = await first.producer({ acks: "durable" }).send("kept", { value: "persisted" });
  assert.equal(r.offset, 0);
  await first.close();

  const second = await Conch.embedded({ dataDir });
  t.after(() => second.close());
  const consumer = second.consumer({ topics: ["kept"] });
  for await (const m of consumer) {
    assert.equal(m.value.toString(), "persisted");
    break;
  }
  await assert.rejects(Conch.embedded({ dataDir, noSuchSetting: 1 } as never), (e: ConchError) => {
    return e.code === ErrorCode.INVALID_CONFIG;
  });
});
