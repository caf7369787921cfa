/**
 * One SDK client per command, always closed whatever the command's outcome.
 */
import type { Conch } from "../client/conch.js";
import { type ClientSecurityFlags, clientSecurity } from "./client-security-options.js";

/**
 * How long a command waits for a broker that does not answer (the SDK's default is 30 s; a
 * person at a terminal wants to hear sooner that the broker is down).
 */
const REQUEST_TIMEOUT_MS = 10_000;

/** A client command's parsed options: --broker, and the TLS and SASL ones. */
export interface ClientFlags extends ClientSecurityFlags {
  broker: string;
}

/** Loads the SDK on first use, so that `--help` and `conch broker` do not pay for it. */
export async function openClient(flags: ClientFlags): Promise<Conch> {
  const { createClient } = await import("../client/conch.js");
  return createClient({
    brokers: [flags.broker],
    clientId: "conch-cli",
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    ...clientSecurity(flags),
  });
}

/** Runs `work` with a client for the command's broker, then closes it. */
export async function withClient<T>(flags: ClientFlags, work: (client: Conch) => Promise<T>): Promise<T> {
  const client = await openClient(flags);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}
