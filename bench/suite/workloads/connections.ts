import { fileURLToPath } from "node:url";
import { startSideProcess } from "../side-process.js";
import type { SlowClientsRequest } from "../worker-protocol.js";
import { runProducers } from "./produce-run.js";
import { scaled, type Workload, type WorkloadParams } from "./workload.js";

/** Connections in the crowd, and how often each of them sends. */
const CROWD = 1_000;
const CROWD_INTERVAL_MS = 1_000;
/** How long the crowd may take to connect and warm up (slow-clients.ts) before the run fails. */
const CROWD_READY_MS = 60_000;

const SLOW_CLIENTS = fileURLToPath(new URL("../slow-clients.js", import.meta.url));

/**
 * 7. Many connections: one fast producer alone, then the same producer again while 1,000 other
 * connections each send one message a second (from a process of their own). The figure is the fast
 * producer's rate among the crowd; the note gives its rate alone, measured just before on the same
 * server, and the share of it kept.
 */
export const connections1k: Workload = {
  id: "connections-1k",
  title: "7. 1,000 connections",
  method: `one producer (100-byte payloads, 1,000 messages per send call, 4 calls in flight, acks before fsync) alone, then again while ${CROWD.toLocaleString("en-US")} other connections (another process) each send one 100-byte message every ${CROWD_INTERVAL_MS} ms, measured once the crowd has run two rounds`,
  durability: "interval",
  params: (scale): WorkloadParams => ({
    stream: "bench_crowd",
    producers: 1,
    messagesPerProducer: scaled(1_000_000, scale, 10_000),
    payloadBytes: 100,
    batch: 1_000,
    inFlight: 4,
    rate: 0,
    warmupMessages: 0,
    connections: CROWD,
  }),
  run: async (driver, p, env) => {
    const solo = await runProducers(driver, { ...p, stream: `${p.stream}_solo` }, "interval");
    await driver.createStream(p.stream);
    const crowd = await startCrowd({
      system: env.system,
      endpoint: env.endpoint,
      stream: p.stream,
      connections: p.connections ?? CROWD,
      intervalMs: CROWD_INTERVAL_MS,
      payloadBytes: p.payloadBytes,
    });
    try {
      const loaded = await runProducers(driver, { ...p, stream: `${p.stream}_fast` }, "interval");
      const crowdAcknowledged = await crowd.stop();
      return {
        ...loaded,
        soloMsgsPerSec: solo.messages / solo.seconds,
        messagesSent: solo.messages + loaded.messages + crowdAcknowledged,
      };
    } catch (err) {
      await crowd.stop().catch(() => undefined);
      throw err;
    }
  },
};

interface CrowdCounts {
  acknowledged: number;
  failed: number;
  firstError: string | null;
}

/** Starts the crowd process; resolves once all its connections are open and warm. */
async function startCrowd(request: SlowClientsRequest): Promise<{ stop(): Promise<number> }> {
  const crowd = await startSideProcess<CrowdCounts>(SLOW_CLIENTS, request, "the crowd", CROWD_READY_MS);
  return {
    // Resolves with the crowd's acknowledged sends; rejects when any of them failed.
    async stop() {
      const counts = await crowd.stop();
      if (counts.failed > 0)
        throw new Error(`${counts.failed} of the crowd's sends failed: ${counts.firstError}`);
      return counts.acknowledged;
    },
  };
}
