/**
 * A real Broker + ConchServer on 127.0.0.1 (port 0 the first time) and a temp data dir, which a
 * test can stop and start again on the same port and data dir, as a restarted broker would be.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { Broker } from "../../src/broker/broker.js";
import type { BrokerConfig } from "../../src/broker/broker-config.js";
import { ConchServer } from "../../src/server/conch-server.js";

export class RealBroker {
  readonly dataDir: string;
  readonly config: Partial<BrokerConfig>;
  port = 0;
  broker: Broker | null = null;
  server: ConchServer | null = null;

  private constructor(dataDir: string, config: Partial<BrokerConfig>) {
    this.dataDir = dataDir;
    this.config = config;
  }

  static async start(t: TestContext, config: Partial<BrokerConfig> = {}): Promise<RealBroker> {
    const dataDir = await mkdtemp(join(tmpdir(), "conch-client-"));
    const b = new RealBroker(dataDir, { segmentBytes: 8 << 20, ...config });
    t.after(async () => {
      await b.stop();
      await rm(dataDir, { recursive: true, force: true });
    });
    await b.restart();
    return b;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts the broker (again), on the port it had before. */
  async restart(): Promise<void> {
    const broker = await Broker.open({ ...this.config, dataDir: this.dataDir });
    const server = new ConchServer(broker, { shutdownTimeoutMs: 1000 });
    try {
      this.port = (await server.listen(this.port, "127.0.0.1")).port;
    } catch (err) {
      await broker.close();
      throw err;
    }
    this.broker = broker;
    this.server = server;
  }

  /** Stops the server (connections dropped after requests in flight finish) and closes the broker. */
  async stop(): Promise<void> {
    const { server, broker } = this;
    this.server = null;
    this.broker = null;
    try {
      await server?.close();
    } finally {
      await broker?.close();
    }
  }
}
