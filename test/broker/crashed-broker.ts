/**
 * A data directory a `conch broker` left by dying with SIGKILL, for the tests of what a restart
 * after a crash serves before its logs are recovered.
 */
import assert from "node:assert/strict";
import { createClient } from "../../src/index.js";
import { BrokerProcess } from "../cli/cli-harness.js";

export const CRASHED_PARTITIONS = 12;
const SEGMENT_BYTES = 64 * 1024;

/**
 * Runs a `conch broker` on `dataDir` that creates topic "t" with `partitions` partitions, gets
 * partition p's p + 2 messages acknowledged (acks leader: written, not fsynced) and is killed with
 * SIGKILL. Resolves with what each partition acknowledged, in order.
 */
export async function crashedDir(dataDir: string, partitions = CRASHED_PARTITIONS): Promise<string[][]> {
  const first = await BrokerProcess.start(dataDir);
  const client = createClient({ brokers: [first.address] });
  const acked: string[][] = [];
  try {
    await client.admin().createTopic("t", {
      partitions,
      configs: { "segment.bytes": String(SEGMENT_BYTES) },
    });
    const producer = client.producer({ acks: "leader" });
    for (let p = 0; p < partitions; p++) {
      acked.push([]);
      for (let i = 0; i < p + 2; i++) {
        await producer.send("t", { value: `p${p}-${i}`, partition: p });
        acked[p]!.push(`p${p}-${i}`);
      }
    }
  } finally {
    await client.close();
  }
  assert.deepEqual(await first.stop("SIGKILL"), { code: null, signal: "SIGKILL" });
  return acked;
}

/** Resolves once `broker` logs that its background opener has recovered every log holding data. */
export async function everyLogOpen(broker: BrokerProcess): Promise<void> {
  const opened = (): boolean =>
    broker.logLines.some((l) => l.includes("every partition log holding data is open"));
  while (!opened()) await new Promise((ok) => broker.child.stdout!.once("data", ok));
}

/**
 * The environment of a `conch broker` child that recovers no log until the test lets it
 * (fixtures/hold-opens.ts): SIGUSR2 lets one partition's open run, SIGWINCH all of them.
 */
export const HOLD_OPENS: Record<string, string> = {
  NODE_OPTIONS: `--import=${new URL("./fixtures/hold-opens.js", import.meta.url).href}`,
};
