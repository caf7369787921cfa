import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { launch } from "../suite/server-process.js";
import type { Durability, RunningServer, ServerSpec } from "../suite/types.js";
import { clientVersion } from "../suite/versions.js";

const run = promisify(execFile);

// Redis Streams with the append-only file as the durable log. RDB snapshots and automatic AOF
// rewrites are switched off: both fork the server mid-run and would measure a background job
// instead of the write path (Conch's runs have no compaction either).
const FSYNC: Record<Durability, string> = { interval: "everysec", durable: "always" };

export const redisServer: ServerSpec = {
  name: "Redis Streams",

  async probe() {
    try {
      const { stdout } = await run("redis-server", ["--version"], { timeout: 5_000 });
      const version = /v=(\S+)/.exec(stdout)?.[1] ?? stdout.trim();
      return { ok: true, version: `redis-server ${version}`, client: clientVersion("ioredis") };
    } catch {
      return { ok: false, reason: "redis-server is not installed (bench/peers/install.sh)" };
    }
  },

  unsupported() {
    return null;
  },

  describe(durability) {
    return durability === "interval"
      ? "appendonly yes, appendfsync everysec (AOF written every event-loop turn, fdatasync once a second in a background thread, seen with strace), RDB and AOF rewrite off"
      : "appendonly yes, appendfsync always (the AOF is written and fdatasynced once per event-loop turn before that turn's replies: a group commit), RDB and AOF rewrite off";
  },

  start(durability): Promise<RunningServer> {
    return launch({
      name: "redis",
      command: "redis-server",
      args: (dataDir, port) => [
        "--bind",
        "127.0.0.1",
        "--port",
        String(port),
        "--dir",
        dataDir,
        "--daemonize",
        "no",
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        FSYNC[durability],
        "--auto-aof-rewrite-percentage",
        "0",
        "--protected-mode",
        "no",
        "--logfile",
        "",
      ],
    });
  },
};
