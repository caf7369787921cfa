/**
 * The option every client command shares: where the broker is.
 */
import { type Command, Option } from "commander";
import { DEFAULT_BROKER, parseBrokerAddress } from "./options.js";

export function brokerOption(): Option {
  return new Option("-b, --broker <host:port>", "broker address")
    .env("CONCH_BROKER")
    .default(DEFAULT_BROKER)
    .argParser((text) => {
      // An empty CONCH_BROKER counts as unset, as empty CONCH_* variables do for the broker.
      if (text === "") return DEFAULT_BROKER;
      parseBrokerAddress(text);
      return text;
    });
}

/** Adds --broker to a client command. */
export function withBroker(command: Command): Command {
  return command.addOption(brokerOption());
}
