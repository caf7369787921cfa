/** Temp brokers and servers for the group tests, and small waiting helpers. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import type { BrokerConfig } from "../../src/broker/broker-config.js";
import type { GroupDescription } from "../../src/broker/group-coordinator.js";
import { BatchBuilder } from "../../src/format/batch-builder.js";
import { ConchError } from "../../src/format/errors.js";
import { ConchServer } from "../../src/server/conch-server.js";

/**
 * A temp directory removed when the test ends. `after` hooks run in the order they were added, so
 * a broker opened on it later may still be closing while this runs: the removal is retried.
 */
export async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "conch-groups-"));
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }));
  return dir;
}

/** A broker on `dataDir` (a new temp dir by default), closed when the test ends. */
export async function openBroker(
  t: TestContext,
  dataDir?: string,
  config: Partial<BrokerConfig> = {},
): Promise<Broker> {
  const dir = dataDir ?? (await tempDir(t));
  const broker = await Broker.open({ segmentBytes: 256 * 1024, flush: "none", ...config, dataDir: dir });
  t.after(() => broker.close().catch(() => {}));
  return broker;
}

export interface Served {
  broker: Broker;
  server: ConchServer;
  address: string;
  dataDir: string;
  /** Clients to close before the server stops (when the test ends, or at stop()). */
  track<T extends { close(): Promise<void> }>(client: T): T;
  /** Closes the tracked clients, the server, then the broker. */
  stop(): Promise<void>;
}

/** A broker and a server on 127.0.0.1 port 0, stopped when the test ends. */
export async function serve(t: TestContext, dataDir?: string): Promise<Served> {
  const dir = dataDir ?? (await tempDir(t));
  const broker = await Broker.open({ segmentBytes: 256 * 1024, flush: "none", dataDir: dir });
  const server = new ConchServer(broker, { shutdownTimeoutMs: 1000 });
  const { port } = await server.listen(0, "127.0.0.1");
  let stopped: Promise<void> | null = null;
  const clients: { close(): Promise<void> }[] = [];
  const track = <T extends { close(): Promise<void> }>(client: T): T => {
    clients.push(client);
    return client;
  };
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
      await server.close();
      await broker.close().catch(() => {});
    })();
    return stopped;
  };
  t.after(stop);
  return { broker, server, address: `127.0.0.1:${port}`, dataDir: dir, track, stop };
}

/** One batch of `values`, in its own buffer. */
export function batchOf(values: readonly string[], timestampMs = Date.now()): Buffer {
  const b = new BatchBuilder({ slabBytes: 4096 });
  for (const v of values) b.add(v, null, timestampMs);
  return Buffer.from(b.finish());
}

/** Produces `perPartition` messages "p<partition>-<i>" to every partition; returns them all. */
export async function fill(
  broker: Broker,
  topic: string,
  partitions: number,
  perPartition: number,
): Promise<Set<string>> {
  const all = new Set<string>();
  for (let p = 0; p < partitions; p++) {
    const values = Array.from({ length: perPartition }, (_, i) => `p${p}-${i}`);
    for (const v of values) all.add(v);
    await broker.produce(topic, p, batchOf(values), "leader");
  }
  return all;
}

export function conchError(code: number, message?: RegExp): (err: unknown) => boolean {
  return (err) =>
    err instanceof ConchError && err.code === code && (message === undefined || message.test(err.message));
}

/** Resolves once `condition` holds, checking every few ms; fails after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A hand-driven clock for the coordinator. */
export class FakeClock {
  ms = 1_000;
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/** The group as the broker describes it, or null while it has no such group. */
export function described(broker: Broker, group: string): GroupDescription | null {
  try {
    return broker.groups.describeGroup(group);
  } catch {
    return null;
  }
}
