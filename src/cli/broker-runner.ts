/**
 * Runs a broker in this process for `conch broker`: loads the settings, opens the broker and its
 * server, logs the one "listening on" line, and shuts down in order on SIGINT or SIGTERM.
 */
import { createServer } from "node:net";
import pino from "pino";
import { Broker } from "../broker/broker.js";
import { type BrokerConfig, configFileValues, loadBrokerConfig } from "../broker/broker-config.js";
import { checkClusterSettings } from "../broker/cluster-settings.js";
import { BrokerHttp } from "../http/broker-http.js";
import { KafkaFrontEnd } from "../kafka/server/kafka-front-end.js";
import { BrokerSecurity } from "../server/broker-security.js";
import { ConchServer } from "../server/conch-server.js";
import { EXIT_ERROR } from "./exit-codes.js";
import { LOG_OPTION_KEYS, type LogOptions, resolveLogOptions } from "./log-options.js";
import { PrettyLogDestination } from "./pretty-log.js";
import { settleHeap } from "./settle-heap.js";

/** `flags` are commander's parsed options: the settings (camelCase keys) plus the log options. */
export async function runBroker(flags: Record<string, unknown>): Promise<void> {
  const sources = { flags, env: process.env, callerKeys: LOG_OPTION_KEYS };
  const config = loadBrokerConfig(sources);
  const logOptions = resolveLogOptions(flags, process.env, configFileValues(sources));
  await serve(config, createLogger(logOptions));
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
  return `conch broker listening on ${hostPort(host, port)} (data ${config.dataDir}, flush ${config.flush})`;
}

/** The address other brokers reach a listener on: a wildcard bind is advertised as loopback. */
function advertised(host: string): string {
  return host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
}

function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Addresses only this host can reach: no warning for them. */
const LOOPBACK = /^(127\.|::1$|localhost$|::ffff:127\.)/;

/**
 * Lines for the start-up log when the broker is reachable from other hosts without protection:
 * the plain listener on a non-loopback address without required logins, or without TLS.
 */
export function exposureWarnings(config: BrokerConfig): string[] {
  const warnings: string[] = [];
  // The HTTP port has no TLS: Basic logins cross it readable by anyone on the path.
  if (config.http && config.authentication === "required" && !LOOPBACK.test(config.httpHost)) {
    warnings.push(
      `the HTTP port on ${config.httpHost} takes Basic logins (user and password) unencrypted: ` +
        "bind --http-host 127.0.0.1, or put a TLS-terminating proxy in front of it on a private network",
    );
  }
  if (LOOPBACK.test(config.host)) return warnings;
  // The Kafka listener's plain port is on --host too: it is as exposed as the native one.
  const plain = config.kafka
    ? `the plain listeners on ${config.host} (native port ${config.port}, Kafka port ${config.kafkaPort})`
    : `the plain listener on ${config.host}`;
  const [accept, send] = config.kafka ? ["accept", "send"] : ["accepts", "sends"];
  if (config.authentication !== "required") {
    warnings.push(
      `${plain} ${accept} connections without a login from any host that reaches them: ` +
        "use --authentication required (and --authorization on), or bind --host 127.0.0.1",
    );
  }
  const tlsPorts = config.kafka ? "--tls-port, --kafka-tls-port" : "--tls-port";
  warnings.push(
    `${plain} ${send} data and credentials unencrypted: ` +
      `serve remote clients on the TLS listeners (--tls-cert, --tls-key, ${tlsPorts}) and keep --host on loopback`,
  );
  return warnings;
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
  checkKafkaTls(config);
  checkClusterSettings(config);
  await checkAddressFree(config.host, config.port);
  if (config.kafka) await checkAddressFree(config.host, config.kafkaPort);
  if (config.kafka && config.kafkaTlsPort !== null) {
    await checkAddressFree(config.tlsHost ?? config.host, config.kafkaTlsPort);
  }
  // The HTTP port first, so an orchestrator's /healthz is answered during a long recovery.
  const http = config.http
    ? new BrokerHttp({
        logger,
        secured: config.authentication === "required" || config.authorization === "on",
        metricsOpen: config.httpMetrics === "open",
        hostNames: config.httpHostNames,
      })
    : null;
  if (http !== null) {
    const at = await http.listen(config.httpPort, config.httpHost);
    logger.info(
      { host: at.address, port: at.port },
      `conch HTTP (metrics, health, admin) on ${at.address}:${at.port}`,
    );
  }
  let broker: Broker;
  try {
    broker = await Broker.open(config, logger, { openLazily: true });
  } catch (err) {
    await http?.close();
    throw err;
  }
  let security: BrokerSecurity;
  try {
    security = await BrokerSecurity.open(config, logger);
  } catch (err) {
    await http?.close();
    await broker.close().catch(() => {});
    throw err;
  }
  // Memory that clients which held many responses left behind is returned at once.
  const server = new ConchServer(broker, { logger, releaseMemory: settleHeap, security });
  settleHeap();
  const kafka = config.kafka
    ? new KafkaFrontEnd(server, broker, { advertisedHost: config.kafkaAdvertisedHost, security })
    : null;
  let address: { address: string; port: number };
  let cluster: { close(): Promise<void> } | null = null;
  try {
    address = await server.listen(config.port, config.host);
    if (security.tls !== null) {
      const tls = await server.listenTls();
      logger.info(
        { host: tls.address, port: tls.port, subject: security.tls.current.subject },
        `conch TLS listener on ${hostPort(tls.address, tls.port)}`,
      );
    }
    if (kafka !== null) {
      const at = await kafka.listen(config.kafkaPort, config.host);
      const node = kafka.node;
      logger.info(
        { host: at.address, port: at.port, advertised: `${node.host}:${node.port}` },
        `conch Kafka protocol on ${hostPort(at.address, at.port)} (advertised as ${hostPort(node.host, node.port)})`,
      );
      if (config.kafkaTlsPort !== null) {
        const tls = await kafka.listenTls(config.kafkaTlsPort, config.tlsHost ?? config.host);
        const tlsNode = kafka.tlsNode;
        logger.info(
          { host: tls.address, port: tls.port, advertised: `${tlsNode.host}:${tlsNode.port}` },
          `conch Kafka protocol over TLS on ${hostPort(tls.address, tls.port)} (advertised as ${hostPort(tlsNode.host, tlsNode.port)})`,
        );
      }
    }
    // Cluster mode: the etcd client is loaded only here, so a single-node broker never loads it.
    if (config.etcd !== "") {
      const { startClusterMode } = await import("../cluster/cluster-mode.js");
      cluster = await startClusterMode({
        broker,
        logger,
        host: advertised(address.address),
        port: config.advertisedPort === 0 ? address.port : config.advertisedPort,
        kafkaHost: kafka === null ? "" : kafka.node.host,
        kafkaPort: kafka === null ? 0 : kafka.node.port,
      });
    }
  } catch (err) {
    security.close();
    await server.close().catch(() => {});
    await http?.close();
    await broker.close().catch(() => {});
    throw err;
  }
  for (const warning of exposureWarnings(config)) logger.warn(warning);
  // SIGHUP: new certificate files and users for new connections; open ones are kept.
  const reload = (): void => {
    logger.info("SIGHUP: reloading the TLS files and users");
    server.reloadSecurity().catch((err: unknown) => logger.error({ err }, "reload failed"));
  };
  process.on("SIGHUP", reload);
  let closing = false;
  if (http !== null) {
    http.addListener("conch", { listening: () => !closing, connections: () => server.connectionCount });
    if (kafka !== null) {
      const listener = kafka.listener;
      http.addListener("kafka", { listening: () => !closing, connections: () => listener.connectionCount });
      const tlsListener = kafka.tlsListener;
      if (tlsListener !== null) {
        http.addListener("kafka-tls", {
          listening: () => !closing,
          connections: () => tlsListener.connectionCount,
        });
      }
    }
    http.attach(broker);
    http.context.security = security;
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
  process.off("SIGHUP", reload);
  security.close();
  try {
    // Out of the cluster first (the lease is revoked): the controller moves this broker's
    // leaderships at once instead of after the lease's TTL.
    await cluster?.close().catch((err: unknown) => logger.warn({ err }, "leaving the cluster failed"));
    await server.close();
  } finally {
    await http?.close();
    await broker.close();
  }
  logger.info("conch broker stopped");
}

/** The Kafka TLS listener serves the TLS listener's certificate: without one it cannot start. */
export function checkKafkaTls(config: BrokerConfig): void {
  if (!config.kafka || config.kafkaTlsPort === null) return;
  if (config.tlsCert === null || config.tlsKey === null) {
    throw new Error("--kafka-tls-port needs --tls-cert and --tls-key (the certificate it serves)");
  }
}

/**
 * Fails with one clear line when the address cannot be listened on (in use, not allowed), before
 * the data directory is opened, so that a start that cannot serve logs nothing. The broker's own
 * listen still reports the rare address taken in between.
 */
async function checkAddressFree(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => {
      probe.once("error", reject);
      probe.listen({ host, port, exclusive: true }, resolve);
    });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === "EADDRINUSE" ? "the address is already in use" : e.message;
    throw Object.assign(new Error(`cannot listen on ${hostPort(host, port)}: ${why}`), { code: e.code });
  } finally {
    await new Promise((resolve) => probe.close(resolve));
  }
}
