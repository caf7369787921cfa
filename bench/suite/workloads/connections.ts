import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
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

interface Crowd {
  /** Stops the crowd; resolves with its acknowledged sends, rejects when any of them failed. */
  stop(): Promise<number>;
}

interface CrowdCounts {
  acknowledged: number;
  failed: number;
  firstError: string | null;
}

/** Starts the crowd process and resolves once all its connections are open and warm. */
function startCrowd(request: SlowClientsRequest): Promise<Crowd> {
  const child = spawn(process.execPath, [SLOW_CLIENTS, JSON.stringify(request)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let done: string | null = null;
  return new Promise<Crowd>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the crowd did not connect and warm up within ${CROWD_READY_MS} ms`));
    }, CROWD_READY_MS);
    lines.on("line", (line) => {
      if (line.startsWith("READY ")) {
        clearTimeout(timer);
        resolve({
          stop: async () => {
            child.stdin.end();
            await exited;
            const counts = JSON.parse(done ?? "null") as CrowdCounts | null;
            if (counts === null) throw new Error("the crowd stopped without its counts");
            if (counts.failed > 0)
              throw new Error(`${counts.failed} of the crowd's sends failed: ${counts.firstError}`);
            return counts.acknowledged;
          },
        });
      } else if (line.startsWith("DONE ")) {
        done = line.slice(5);
      } else if (line.startsWith("FAILED ")) {
        clearTimeout(timer);
        reject(new Error(`the crowd failed: ${line.slice(7)}`));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the crowd exited (${code}) before it was ready`));
    });
  });
}
