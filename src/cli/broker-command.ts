/**
 * `conch broker`: runs a broker in this process until SIGINT or SIGTERM. Its options are built from
 * the broker's settings table, so a new setting appears here (with its flag, environment variable,
 * description and default) without touching this file.
 */
import { type Command, Option } from "commander";
import { BROKER_SETTINGS, CONFIG_FILE_ENV, CONFIG_FILE_OPTION } from "../broker/broker-settings.js";
import { LOG_FORMATS, LOG_LEVELS } from "./log-options.js";

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
    // Defined after the positive flag, so commander gives the setting no default of its own.
    if (s.negation !== undefined) command.addOption(new Option(s.negation, `turn ${s.flag} off`));
  }
  command
    .addOption(new Option(CONFIG_FILE_OPTION, `JSON file of settings (env ${CONFIG_FILE_ENV})`))
    // No commander default or env here either: the config file may set these too (log-options.ts).
    .addOption(
      new Option(
        "--log-level <level>",
        'least severe log level written (default: "info"; env CONCH_LOG_LEVEL)',
      ).choices(LOG_LEVELS),
    )
    .addOption(
      new Option(
        "--log-format <format>",
        "log lines as JSON, or pretty for people (default: pretty on a terminal; env CONCH_LOG_FORMAT)",
      ).choices(LOG_FORMATS),
    )
    .action(async (flags: Record<string, unknown>) => {
      // Loaded here so that other commands do not pay for the broker's modules at startup.
      const { runBroker } = await import("./broker-runner.js");
      await runBroker(flags);
    });
}
