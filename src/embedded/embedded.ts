/**
 * Embedded mode: a broker and its TCP server started in this process, on 127.0.0.1 and a free
 * port, so an application (or a test) gets a real broker with the same client API and no separate
 * process. The broker and server layers are loaded with dynamic import() only here: a client that
 * never uses embedded mode never loads them (the client itself knows nothing of either).
 */
import type { Logger } from "pino";
import type { BrokerConfig } from "../broker/broker-config.js";
import type { ClientOptions } from "../client/options.js";

/** Broker settings (see the broker's configuration), client settings, and an optional logger. */
export type EmbeddedOptions = Partial<Omit<BrokerConfig, "host" | "port">> &
  Omit<ClientOptions, "brokers"> & {
    dataDir: string;
    /** Where the broker and server log; silent by default. */
    logger?: Logger;
  };

export interface EmbeddedBroker {
  /** "127.0.0.1:port" */
  readonly address: string;
  /** Stops the server (letting requests in flight finish), then flushes and closes the broker. */
  close(): Promise<void>;
}

const CLIENT_KEYS = new Set<string>([
  "clientId",
  "connectTimeoutMs",
  "requestTimeoutMs",
  "reconnectBackoffMs",
  "reconnectBackoffMaxMs",
  "logger",
]);

/** Splits embedded options into the broker's settings and the client's. */
export function splitEmbeddedOptions(options: EmbeddedOptions): {
  broker: Partial<BrokerConfig>;
  client: Omit<ClientOptions, "brokers">;
} {
  const broker: Record<string, unknown> = {};
  const client: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) {
    if (v === undefined || k === "logger") continue;
    if (CLIENT_KEYS.has(k)) client[k] = v;
    else broker[k] = v;
  }
  return { broker: broker as Partial<BrokerConfig>, client: client as Omit<ClientOptions, "brokers"> };
}

export async function startEmbeddedBroker(options: EmbeddedOptions): Promise<EmbeddedBroker> {
  const [{ Broker }, { ConchServer }] = await Promise.all([
    import("../broker/broker.js"),
    import("../server/conch-server.js"),
  ]);
  const settings = splitEmbeddedOptions(options).broker;
  const broker = await Broker.open({ ...settings, host: "127.0.0.1", port: 0 }, options.logger);
  const server = new ConchServer(broker, options.logger === undefined ? {} : { logger: options.logger });
  let port: number;
  try {
    port = (await server.listen(0, "127.0.0.1")).port;
  } catch (err) {
    await broker.close().catch(() => {});
    throw err;
  }
  let closing: Promise<void> | null = null;
  return {
    address: `127.0.0.1:${port}`,
    close: () => {
      closing ??= (async () => {
        try {
          await server.close();
        } finally {
          await broker.close();
        }
      })();
      return closing;
    },
  };
}
