/**
 * `conch broker`: runs a broker in this process until SIGINT or SIGTERM. Its options are built from
 * the broker's settings table, so a new setting appears here (with its flag, environment variable,
 * description and default) without touching this file.
 */
import { type Command, Option } from "commander";
import pino from "pino";
import { Broker } from "../broker/broker.js";
import { type BrokerConfig, loadBrokerConfig } from "../broker/broker-config.js";
import { BROKER_SETTINGS, CONFIG_FILE_ENV, CONFIG_FILE_OPTION } from "../broker/broker-settings.js";
import { ConchServer } from "../server/conch-server.js";
import { EXIT_ERROR } from "./exit-codes.js";
import { PrettyLogDestination } from "./pretty-log.js";

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
const LOG_FORMATS = ["json", "pretty"] as const;

interface LogOptions {
  logLevel: (typeof LOG_LEVELS)[number];
  logFormat?: (typeof LOG_FORMATS)[number];
}

export function registerBrokerCommand(program: Command): void {
  const command = program
    .command("broker")
    .description("run a broker in the foreground until SIGINT or SIGTERM")
    .addHelpText(
      "after",
      "\nEach setting comes from its flag, else its environment variable, else the --config file,\n" +
        "else the default.\n\nExample:\n  conch broker --data-dir /var/lib/conch --port 7420 --flush sync",
    );
  for (const s of BROKER_SETTINGS) {
    // No commander default: an unset flag must let the environment and the file speak.
    const shown = JSON.stringify(s.defaultValue);
    command.addOption(new Option(s.option, `${s.description} (default: ${shown}; env ${s.env})`));
  }
  command
    .addOption(new Option(CONFIG_FILE_OPTION, `JSON file of settings (env ${CONFIG_FILE_ENV})`))
    .addOption(
      new Option("--log-level <level>", "least severe log level written")
        .choices(LOG_LEVELS)
        .env("CONCH_LOG_LEVEL")
        .default("info"),
    )
    .addOption(
      new Option(
        "--log-format <format>",
        "log lines as JSON, or pretty for people (default: pretty on a terminal)",
      )
        .choices(LOG_FORMATS)
        .env("CONCH_LOG_FORMAT"),
    )
    .action(async (flags: Record<string, unknown> & LogOptions) => {
      const config = loadBrokerConfig({ flags });
      const logger = createLogger(flags);
      await runBroker(config, logger);
    });
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
async function runBroker(config: BrokerConfig, logger: pino.Logger): Promise<void> {
  const broker = await Broker.open(config, logger);
  const server = new ConchServer(broker, { logger });
  let address: { address: string; port: number };
  try {
    address = await server.listen(config.port, config.host);
  } catch (err) {
    await broker.close().catch(() => {});
    throw err;
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
  try {
    await server.close();
  } finally {
    await broker.close();
  }
  logger.info("conch broker stopped");
}
