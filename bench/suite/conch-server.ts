import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { sleep } from "./deadline.js";
import { freePort } from "./free-port.js";
import { requestGcSnapshot } from "./gc-snapshot.js";
import { canConnect, launch } from "./server-process.js";
import type { Durability, Endpoint, RunningServer, ServerSpec } from "./types.js";

const run = promisify(execFile);

// Conch's broker in a process of its own (`conch broker`), exactly as the peers run: its CPU time
// is read from /proc like theirs, and the client pays the same loopback TCP costs.
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const BIN = `${ROOT}bin/conch.js`;
const MAIN = `${ROOT}dist/src/cli/main.js`;
// Prints the broker's GC and CPU totals on SIGUSR2: the suite reports the broker's GC share.
const GC_SHARE = `${ROOT}scripts/gc-share.mjs`;
const KAFKA_READY_MS = 15_000;

async function commit(): Promise<string> {
  try {
    const { stdout } = await run("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, timeout: 5_000 });
    return ` (commit ${stdout.trim()})`;
  } catch {
    return "";
  }
}

export const conchServer: ServerSpec = {
  name: "Conch",
  servesKafka: true,

  async probe() {
    if (!existsSync(MAIN)) return { ok: false, reason: "Conch is not built (dist/src/cli/main.js missing)" };
    const { version } = JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { version: string };
    return { ok: true, version: `conch ${version}${await commit()}`, client: `conch SDK ${version}` };
  },

  unsupported() {
    return null;
  },

  describe(durability: Durability) {
    return durability === "interval"
      ? "flush=interval, flush.interval.ms=1000, producer acks=leader (acknowledged once written to the OS)"
      : "flush=interval, producer acks=durable (acknowledged after a group fsync covering the batch)";
  },

  async start(): Promise<RunningServer> {
    // A port of its own for the Kafka listener (the workloads need to know it), chosen per attempt.
    const kafka: Endpoint = { host: "127.0.0.1", port: 0 };
    const server = await launch({
      name: "conch",
      command: process.execPath,
      args: async (dataDir, port) => {
        kafka.port = await freePort();
        return brokerArgs(dataDir, port, kafka.port);
      },
      async ready() {
        const deadline = Date.now() + KAFKA_READY_MS;
        while (!(await canConnect(kafka))) {
          if (Date.now() > deadline)
            throw new Error(`the Kafka listener did not open within ${KAFKA_READY_MS} ms`);
          await sleep(50);
        }
      },
    });
    return {
      pid: server.pid,
      endpoint: server.endpoint,
      kafka,
      stop: () => server.stop(),
      gcSnapshot: () => requestGcSnapshot(server.pid, server.logPath),
    };
  },
};

function brokerArgs(dataDir: string, port: number, kafkaPort: number): string[] {
  return [
    "--import",
    GC_SHARE,
    BIN,
    "broker",
    "--data-dir",
    `${dataDir}/data`,
    "--host",
    "127.0.0.1",
    "--port",
    String(port),
    // The HTTP and Kafka ports run as in any broker, on free ports so that runs never clash.
    "--http-port",
    "0",
    "--kafka-port",
    String(kafkaPort),
    "--flush",
    "interval",
    "--flush-interval-ms",
    "1000",
    // Workload 6b's 10,000 partitions, with room for the internal topics beside them.
    "--max-partitions",
    "20000",
    // Workload 7's crowd of 1,000 connections from one address, with the others beside it.
    "--max-connections",
    "4096",
    "--max-connections-per-ip",
    "4096",
    "--log-level",
    "warn",
    "--log-format",
    "json",
  ];
}
