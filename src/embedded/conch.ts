/**
 * The package's `Conch`: the client (client/conch.ts) with embedded mode, which starts a broker in
 * this process. It lives here, above the client, so that the client depends on neither the broker
 * nor the server.
 */
import { Conch as Client } from "../client/conch.js";
import type { ClientOptions } from "../client/options.js";
import { type EmbeddedOptions, splitEmbeddedOptions, startEmbeddedBroker } from "./embedded.js";

export class Conch extends Client {
  /**
   * Starts a broker in this process (on 127.0.0.1, a free port, data in `dataDir`) and returns a
   * client connected to it; `close()` stops both.
   */
  static async embedded(options: EmbeddedOptions): Promise<Conch> {
    const broker = await startEmbeddedBroker(options);
    try {
      return new Conch({ ...splitEmbeddedOptions(options).client, brokers: [broker.address] }, broker);
    } catch (err) {
      await broker.close();
      throw err;
    }
  }
}

/** A client for the given bootstrap brokers. */
export function createClient(options: ClientOptions): Conch {
  return new Conch(options);
}
