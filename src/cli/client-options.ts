/**
 * The options every client command shares: where the broker is, and how to connect to it securely
 * (client-security-options.ts).
 */
import { type Command, Option } from "commander";
import { withClientSecurity } from "./client-security-options.js";
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

/** Adds --broker, and the TLS and SASL options, to a client command. */
export function withBroker(command: Command): Command {
  return withClientSecurity(command.addOption(brokerOption()));
}
