/**
 * A group member's way to its group's coordinator (docs/cluster.md, "Consumer groups"): it asks a
 * bootstrap broker FindCoordinator, then sends the group's requests to the broker named, on a
 * connection of their own. On NOT_COORDINATOR or a lost connection it forgets that broker, and the
 * next request finds the coordinator again; the failure itself goes to the caller, which retries
 * as it does any retriable error (the coordinator moved: a new one knows no member, so the
 * member joins again). A single-node broker answers "the broker asked" (host ""), and one that
 * predates FindCoordinator UNKNOWN_API: then the bootstrap connection is the coordinator's.
 */
import { ConchError, ErrorCode } from "../format/errors.js";
import { decodeFindCoordinatorResponse, encodeFindCoordinatorRequest } from "../protocol/find-coordinator.js";
import { formatAddress } from "./address.js";
import type { Decoder, Encoder, RequestOptions } from "./connection.js";
import { ConnectionManager, type ConnectionManagerOptions } from "./connection-manager.js";
import { asConchError } from "./errors.js";

export class CoordinatorLink {
  readonly #bootstrap: ConnectionManager;
  readonly #options: ConnectionManagerOptions;
  readonly #group: string;
  /** The coordinator's connection once found (the bootstrap one when that is the coordinator). */
  #found: Promise<ConnectionManager> | null = null;
  #closed = false;

  /** `bootstrap` stays the caller's to close. */
  constructor(bootstrap: ConnectionManager, options: ConnectionManagerOptions, group: string) {
    this.#bootstrap = bootstrap;
    this.#options = options;
    this.#group = group;
  }

  /** Sends a request to the coordinator, finding it first if needed. */
  async request<A, T>(encode: Encoder<A>, arg: A, decode: Decoder<T>, options?: RequestOptions): Promise<T> {
    const found = this.#find(options?.signal);
    const manager = await found;
    try {
      return await manager.request(encode, arg, decode, options);
    } catch (err) {
      const e = asConchError(err);
      if (e.code === ErrorCode.NOT_COORDINATOR || e.code === ErrorCode.CONNECTION_CLOSED) this.#forget(found);
      throw e;
    }
  }

  close(): void {
    this.#closed = true;
    this.#forget(this.#found);
  }

  #find(signal: AbortSignal | undefined): Promise<ConnectionManager> {
    if (this.#found !== null) return this.#found;
    const found = this.#bootstrap
      .request(encodeFindCoordinatorRequest, { group: this.#group }, decodeFindCoordinatorResponse, {
        signal,
      })
      .then(
        (res) => {
          if (res.host === "" || this.#closed) return this.#bootstrap;
          const address = formatAddress({ host: res.host, port: res.port });
          // A coordinator that cannot be reached is given up at once (its requests fail with
          // NOT_COORDINATOR), not retried for a request timeout: another broker leads soon.
          return new ConnectionManager({
            ...this.#options,
            brokers: [address],
            onConnectError: () => this.#forget(found),
          });
        },
        (err: unknown) => {
          const e = asConchError(err);
          if (e.code === ErrorCode.UNKNOWN_API) return this.#bootstrap;
          throw e;
        },
      );
    this.#found = found;
    // A failed look-up is not kept: the next request asks again.
    found.catch(() => this.#forget(found));
    return found;
  }

  #forget(found: Promise<ConnectionManager> | null): void {
    if (found === null || this.#found !== found) return;
    this.#found = null;
    found.then(
      (m) => {
        if (m !== this.#bootstrap)
          m.close(new ConchError(ErrorCode.NOT_COORDINATOR, "the coordinator moved"));
      },
      () => {},
    );
  }
}
