import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { test } from "node:test";
import { startSecureServer } from "./secure-server.js";

const MESSAGES = 60;
const VALUE = "x".repeat(1000);

test("a produce quota set live visibly throttles a fast producer, and every message is kept", async (t) => {
  const f = await startSecureServer(t);
  await f.broker.createTopic("metered", 1);
  const client = f.client({});
  const producer = client.producer({ lingerMs: 0 });

  const sendAll = async (): Promise<number> => {
    const started = performance.now();
    await Promise.all(Array.from({ length: MESSAGES }, () => producer.send("metered", { value: VALUE })));
    return performance.now() - started;
  };
  const unmetered = await sendAll();

  // 20,000 B/s for every principal, written while the broker runs and applied by a reload.
  const dir = join(f.broker.config.dataDir, "security");
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "quotas.json"),
    JSON.stringify({ version: 1, principals: { "*": { produceBytesPerSec: 20_000 } } }),
  );
  await f.server.reloadSecurity();
  const metered = await sendAll();

  // ~60 KB at 20 KB/s with one second's burst: at least ~2 s of throttling.
  assert.ok(
    metered >= 1500,
    `throttled sends took ${Math.round(metered)} ms (unthrottled ${Math.round(unmetered)} ms)`,
  );
  const [partition] = (await client.admin().describeTopic("metered")).partitions;
  assert.equal(partition?.highWatermark, 2 * MESSAGES, "every message was kept");
});
