import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { launch } from "../suite/server-process.js";
import type { RunningServer, ServerSpec } from "../suite/types.js";
import { clientVersion } from "../suite/versions.js";

const run = promisify(execFile);

// NATS JetStream with file storage, one replica. The Debian package ships nats-server 2.9, which
// rejects the `sync_interval` option of later servers ("unknown field"): its file store has no
// setting for when it fsyncs, and no mode that fsyncs before acknowledging a publish. What it
// really does is in docs/performance.md (measured with strace, not taken from its docs).

export const natsServer: ServerSpec = {
  name: "NATS JetStream",

  async probe() {
    try {
      const { stdout, stderr } = await run("nats-server", ["--version"], { timeout: 5_000 });
      const version = /v(\d+\.\d+\.\d+)/.exec(stdout + stderr)?.[1] ?? (stdout + stderr).trim();
      return { ok: true, version: `nats-server ${version}`, client: clientVersion("nats") };
    } catch {
      return { ok: false, reason: "nats-server is not installed (bench/peers/install.sh)" };
    }
  },

  unsupported(durability) {
    return durability === "durable"
      ? "nats-server 2.9 cannot fsync before acknowledging (no sync_interval / sync always option)"
      : null;
  },

  describe(durability) {
    return durability === "interval"
      ? "JetStream file storage, defaults: acknowledged once written to the OS; fsync on a 2-minute timer (seen with strace; 2.9 has no sync_interval option)"
      : "not available";
  },

  start(): Promise<RunningServer> {
    return launch({
      name: "nats",
      command: "nats-server",
      async args(dataDir, port) {
        const config = join(dataDir, "nats.conf");
        await writeFile(
          config,
          [
            `listen: "127.0.0.1:${port}"`,
            `jetstream {`,
            `  store_dir: ${JSON.stringify(join(dataDir, "jetstream"))}`,
            `}`,
            "",
          ].join("\n"),
        );
        return ["-c", config];
      },
    });
  },
};
