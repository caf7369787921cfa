/**
 * The entry point: a client for a set of bootstrap brokers that makes producers, consumers and an
 * admin, and closes them all at once.
 *
 *   const conch = createClient({ brokers: ["127.0.0.1:7420"] });
 *   const producer = conch.producer({ acks: "durable" });
 *   await producer.send("events", { key: "user-1", value: "hello" });
 *   await conch.close();
 *
 * Each producer and consumer has its own connection (so a long poll or a large produce never
 * queues behind another's); the admin shares one, made on first use.
 */
import { Admin } from "./admin.js";
import { ConnectionManager } from "./connection-manager.js";
import { Consumer, type ConsumerOptions } from "./consumer.js";
import { GroupAdmin } from "./group-admin.js";
import { GroupConsumer, type GroupConsumerOptions } from "./group-consumer.js";
import { type ClientOptions, connectionManagerOptions } from "./options.js";
import { Producer, type ProducerOptions } from "./producer.js";

/** Something the client closes last, after its producers and consumers (an embedded broker). */
export interface OwnedResource {
  close(): Promise<void>;
}

interface Closable {
  readonly closed: boolean;
  close(): Promise<void>;
}

export class Conch {
  #options: ClientOptions;
  #admin: { manager: ConnectionManager; admin: Admin } | null = null;
  #open = new Set<Closable>();
  #owned: OwnedResource | null;
  #closing: Promise<void> | null = null;

  /** `owned` is closed by close(), after everything made here (embedded mode's broker). */
  constructor(options: ClientOptions, owned: OwnedResource | null = null) {
    // Checks the options now rather than at the first connection.
    connectionManagerOptions(options);
    this.#options = { ...options, brokers: [...options.brokers] };
    this.#owned = owned;
  }

  /** The bootstrap addresses ("host:port"). */
  get brokers(): readonly string[] {
    return this.#options.brokers;
  }

  producer(options: ProducerOptions = {}): Producer {
    return this.#track(new Producer(this.#options, options));
  }

  /** With a `group`, a member of that consumer group (docs/groups.md); else a consumer of chosen partitions. */
  consumer(options: GroupConsumerOptions): GroupConsumer;
  consumer(options?: ConsumerOptions): Consumer;
  consumer(options: ConsumerOptions | GroupConsumerOptions = {}): Consumer | GroupConsumer {
    if ("group" in options) return this.#track(new GroupConsumer(this.#options, options));
    return this.#track(new Consumer(this.#options, options));
  }

  /** Consumer group administration, on the admin's connection. */
  groups(): GroupAdmin {
    this.admin();
    return new GroupAdmin(this.#admin!.manager, connectionManagerOptions(this.#options));
  }

  admin(): Admin {
    if (this.#admin === null) {
      const manager = new ConnectionManager(connectionManagerOptions(this.#options));
      this.#admin = { manager, admin: new Admin(manager) };
    }
    return this.#admin.admin;
  }

  /** Closes every producer (after flushing it) and consumer made here, then what the client owns. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const results = await Promise.allSettled([...this.#open].map((c) => c.close()));
      this.#admin?.manager.close();
      if (this.#owned !== null) await this.#owned.close();
      const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      if (failed !== undefined) throw failed.reason;
    })();
    return this.#closing;
  }

  #track<T extends Closable>(c: T): T {
    for (const old of this.#open) if (old.closed) this.#open.delete(old);
    this.#open.add(c);
    return c;
  }
}

/** A client for the given bootstrap brokers. */
export function createClient(options: ClientOptions): Conch {
  return new Conch(options);
}
