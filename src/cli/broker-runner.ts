/**
 * Runs a broker in this process for `conch broker`: loads the settings, opens the broker and its
 * server, logs the one "listening on" line, and shuts down in order on SIGINT or SIGTERM.
 */
import pino from "pino";
import { Broker } from "../broker/broker.js";
import { type BrokerConfig, loadBrokerConfig } from "../broker/broker-config.js";
import { BrokerHttp } from "../http/broker-http.js";
import { ConchServer } from "../server/conch-server.js";
import type { LogOptions } from "./broker-command.js";
import { EXIT_ERROR } from "./exit-codes.js";
import { PrettyLogDestination } from "./pretty-log.js";
import { settleHeap } from "./settle-heap.js";

/** `flags` are commander's parsed options: the settings (camelCase keys) plus the log options. */
export async function runBroker(flags: Record<string, unknown> & LogOptions): Promise<void> {
  const config = loadBrokerConfig({ flags });
  await serve(config, createLogger(flags));
}

export function createLogger(options: LogOptions): pino.Logger {
  const pretty =
    options.logFormat === undefined ? process.stdout.isTTY === true : options.logFormat === "pretty";
  const destination = pretty
    ? new PrettyLogDestination(process.stdout, process.stdout.isTTY === true)
    : pino.destination({ dest: 1, sync: true });
  return pino({ level: options.logLevel, base: { pid: process.pid } }, destination);
}

/** The one line that says the broker is ready, and where. */
export function listeningMessage(config: BrokerConfig, host: string, port: number): string {
  const where = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  return `conch broker listening on ${where} (data ${config.dataDir}, flush ${config.flush})`;
}

/**
 * Opens the broker, serves it until SIGINT or SIGTERM, then shuts down in order: the server stops
 * accepting and lets requests in flight finish, then the broker flushes and closes its files.
 * A second signal during shutdown exits at once.
 */
async function serve(config: BrokerConfig, logger: pino.Logger): Promise<void> {
  // A bug that escapes every handler ends the process, as Node would, but as a log entry that the
  // broker's log readers see rather than a stack trace on stderr.
  const fatal = (err: unknown): void => {
    logger.fatal({ err }, "conch broker failed: exiting");
    process.exit(EXIT_ERROR);
  };
  process.on("uncaughtException", fatal).on("unhandledRejection", fatal);
  // The HTTP port first, so an orchestrator's /healthz is answered during a long recovery.
  const http = config.http ? new BrokerHttp({ logger }) : null;
  if (http !== null) {
    const at = await http.listen(config.httpPort, config.httpHost);
    logger.info(
      { host: at.address, port: at.port },
      `conch HTTP (metrics, health, admin) on ${at.address}:${at.port}`,
    );
  }
  let broker: Broker;
  try {
    broker = await Broker.open(config, logger);
  } catch (err) {
    await http?.close();
    throw err;
  }
  // Memory that clients which held many responses left behind is returned at once.
  const server = new ConchServer(broker, { logger, releaseMemory: settleHeap });
  settleHeap();
  let address: { address: string; port: number };
  try {
    address = await server.listen(config.port, config.host);
  } catch (err) {
    await http?.close();
    await broker.close().catch(() => {});
    throw err;
  }
  let closing = false;
  if (http !== null) {
    http.addListener("conch", { listening: () => !closing, connections: () => server.connectionCount });
    http.attach(broker);
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
    logger.info(
      { host: address.address, port: address.port },
      listeningMessage(config, address.address, address.port),
    );
  });
  const force = (again: NodeJS.Signals): void => {
    logger.warn({ signal: again }, "second signal during shutdown: exiting now");
    process.exit(EXIT_ERROR);
  };
  process.on("SIGINT", force).on("SIGTERM", force);
  logger.info({ signal }, `conch broker stopping (${signal})`);
  closing = true;
  http?.stopping();
  try {
    await server.close();
  } finally {
    await http?.close();
    await broker.close();
  }
  logger.info("conch broker stopped");
}
