/**
 * Where each partition's requests go: the connection to its leader (docs/client.md, Finding
 * leaders).
 *
 * The pool holds the bootstrap ConnectionManager and, in cluster mode, one more per broker id
 * that Metadata names as a leader, made when first needed and closed with the pool. Leaders are
 * cached per topic. A lookup is two map reads and makes nothing; a topic not yet known goes to
 * the bootstrap broker while its leaders are asked for.
 *
 * A single-node broker answers Metadata as broker 0 at host "" port 0 ("this connection"): the
 * pool then sends everything to the bootstrap connection and never asks again, so a single node
 * costs one Metadata request in all. A broker too old for Metadata counts as a single node.
 *
 * In cluster mode the leaders are asked again when a request to a leader failed retriably
 * (NOT_LEADER and its kin, a lost connection) and when a leader's broker refuses connections;
 * at most once per `minRefreshIntervalMs`, however many failures call for it, so a dead broker
 * under load does not set off a storm of Metadata requests. A broker that is no longer listed
 * (its lease ended) has its connection closed, which fails the requests waiting for it as
 * retriable, so they are retried on the new leader instead of waiting out the request timeout.
 * UNKNOWN_TOPIC from a leader of a partition the metadata names asks again too (`names`).
 */
import { type ConchError, ErrorCode } from "../format/errors.js";
import {
  decodeMetadataResponse,
  encodeMetadataRequest,
  type MetadataResponse,
} from "../protocol/metadata.js";
import { ConnectionManager, type ConnectionManagerOptions } from "./connection-manager.js";
import { asConchError, connectionClosedError } from "./errors.js";

/** The shortest time between two Metadata requests of one pool, by default (Kafka's retry.backoff.ms). */
export const DEFAULT_METADATA_MIN_INTERVAL_MS = 100;

/** Asks a broker for the leaders of `topics`: a seam for tests. */
export type MetadataSource = (
  manager: ConnectionManager,
  topics: readonly string[],
) => Promise<MetadataResponse>;

const askMetadata: MetadataSource = (manager, topics) =>
  manager.request(encodeMetadataRequest, topics, decodeMetadataResponse);

export interface BrokerPoolOptions {
  minRefreshIntervalMs?: number;
  ask?: MetadataSource;
}

interface LeaderBroker {
  address: string;
  manager: ConnectionManager;
}

export class BrokerPool {
  readonly bootstrap: ConnectionManager;
  #options: ConnectionManagerOptions;
  #ask: MetadataSource;
  #minIntervalMs: number;
  #brokers = new Map<number, LeaderBroker>();
  /** Leader broker id by partition (-1: offline or unknown), per topic. */
  #leaders = new Map<string, number[]>();
  /** Topics whose leaders are wanted: every one ever looked up. */
  #topics = new Set<string>();
  /** Learned that the bootstrap broker runs on its own: everything goes there. */
  #single = false;
  #refreshing = false;
  #again = false;
  #lastRefreshAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | null = null;
  /**
   * Waiting for the Metadata request numbered `after` (by `refreshes`) to settle, however it went:
   * one already under way may not have asked for their topic.
   */
  #settled: Array<{ after: number; resolve: () => void }> = [];
  /** Which manager the next Metadata request goes to when the last one failed. */
  #askFrom = 0;
  #closed = false;
  /** Metadata requests sent, for tests and diagnostics. */
  refreshes = 0;

  constructor(bootstrap: ConnectionManager, options: ConnectionManagerOptions, pool: BrokerPoolOptions = {}) {
    this.bootstrap = bootstrap;
    this.#options = options;
    this.#ask = pool.ask ?? askMetadata;
    this.#minIntervalMs = pool.minRefreshIntervalMs ?? DEFAULT_METADATA_MIN_INTERVAL_MS;
  }

  /** Whether the bootstrap broker turned out to be a single node (no routing). */
  get singleNode(): boolean {
    return this.#single;
  }

  /** The connection to the partition's leader, or the bootstrap one while it is not known. */
  leaderFor(topic: string, partition: number): ConnectionManager {
    if (this.#single) return this.bootstrap;
    const leaders = this.#leaders.get(topic);
    if (leaders === undefined) {
      if (!this.#topics.has(topic)) {
        this.#topics.add(topic);
        this.refresh();
      }
      return this.bootstrap;
    }
    const id = leaders[partition];
    if (id === undefined || id < 0) return this.bootstrap;
    return this.#brokers.get(id)?.manager ?? this.bootstrap;
  }

  /** Whether a request for the topic can go now: its leaders are known, or there is one broker. */
  knows(topic: string): boolean {
    return this.#single || this.#leaders.has(topic);
  }

  /**
   * Resolves once the topic's leaders are known, or a Metadata request for them settled without
   * naming them (then requests go to the bootstrap broker, whose answer says what is wrong). At
   * once when they are known or the broker is a single node: the first request of a topic waits
   * for one Metadata round trip, rather than go to a broker that may not lead its partition.
   */
  whenKnown(topic: string): Promise<void> {
    if (this.#single || this.#closed || this.#leaders.has(topic)) return Promise.resolve();
    // One under way that asked for the topic will do; else the next one.
    const after = this.#refreshing && this.#topics.has(topic) ? this.refreshes : this.refreshes + 1;
    this.#topics.add(topic);
    const settled = new Promise<void>((resolve) => this.#settled.push({ after, resolve }));
    this.refresh();
    return settled;
  }

  /**
   * Whether the cluster's metadata names the partition. Then UNKNOWN_TOPIC or UNKNOWN_PARTITION
   * from its leader means the leader has not yet taken up a partition the controller has made (a
   * topic just created): it passes, as Kafka clients treat UNKNOWN_TOPIC_OR_PARTITION.
   */
  names(topic: string, partition: number): boolean {
    if (this.#single) return false;
    const leaders = this.#leaders.get(topic);
    return leaders !== undefined && partition < leaders.length;
  }

  /** A request for a partition failed with `err`: asks for the leaders again if it may cure it. */
  leaderFailed(err: ConchError): void {
    if (this.#single) {
      // A node that joined a cluster since: route from now on.
      if (!isLeaderError(err)) return;
      this.#single = false;
    }
    if (err.retriable || isUnknown(err)) this.refresh();
  }

  /** Asks for the leaders of every topic looked up, now or as soon as the rate bound allows. */
  refresh(): void {
    if (this.#closed || this.#single) return;
    if (this.#refreshing) {
      this.#again = true;
      return;
    }
    if (this.#timer !== null) return;
    const wait = this.#lastRefreshAt + this.#minIntervalMs - performance.now();
    if (wait > 0) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        this.refresh();
      }, Math.ceil(wait));
      return;
    }
    this.#refreshing = true;
    this.#lastRefreshAt = performance.now();
    const number = ++this.refreshes;
    const from = this.#metadataManager();
    this.#ask(from, [...this.#topics])
      .then(
        (res) => this.#learn(res),
        (err: unknown) => {
          const e = asConchError(err);
          if (e.code === ErrorCode.UNKNOWN_API) this.#becomeSingle();
          // Ask another broker next time: this one may be the one that died.
          else this.#askFrom++;
        },
      )
      .finally(() => {
        this.#refreshing = false;
        if (this.#settled.length > 0) {
          const waiting = this.#settled;
          // A single node is never asked again: nobody waits for a next request.
          const done = (w: { after: number }): boolean => w.after <= number || this.#single;
          this.#settled = waiting.filter((w) => !done(w));
          for (const w of waiting) if (done(w)) w.resolve();
        }
        if (this.#again) {
          this.#again = false;
          this.refresh();
        }
      });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    for (const b of this.#brokers.values()) b.manager.close();
    this.#brokers.clear();
    this.bootstrap.close();
    for (const w of this.#settled) w.resolve();
    this.#settled = [];
  }

  /**
   * Where the next Metadata request goes: from the one in turn, the first broker connected now.
   * A request to a manager still connecting waits out the request timeout if its broker is the
   * one that died, holding up every refresh meanwhile (a leader's death cost 1.5 s more so).
   */
  #metadataManager(): ConnectionManager {
    const all = [this.bootstrap];
    for (const b of this.#brokers.values()) all.push(b.manager);
    const n = all.length;
    for (let k = 0; k < n; k++) {
      const m = all[(this.#askFrom + k) % n] as ConnectionManager;
      if (m.current !== null) return m;
    }
    return all[this.#askFrom % n] as ConnectionManager;
  }

  #learn(res: MetadataResponse): void {
    if (this.#closed) return;
    const only = res.brokers[0];
    if (res.brokers.length === 1 && only !== undefined && only.host === "" && only.port === 0) {
      this.#becomeSingle();
      return;
    }
    const live = new Set<number>();
    for (const b of res.brokers) {
      live.add(b.id);
      const address = b.host.includes(":") ? `[${b.host}]:${b.port}` : `${b.host}:${b.port}`;
      const known = this.#brokers.get(b.id);
      if (known?.address === address) continue;
      known?.manager.close(connectionClosedError(`broker ${b.id} moved to ${address}`));
      this.#brokers.set(b.id, { address, manager: this.#managerFor(address) });
    }
    for (const [id, b] of this.#brokers) {
      if (live.has(id)) continue;
      b.manager.close(connectionClosedError(`broker ${id} left the cluster`));
      this.#brokers.delete(id);
    }
    for (const t of res.topics) {
      if (t.errorCode !== 0) {
        this.#leaders.delete(t.name);
        continue;
      }
      const leaders = new Array<number>(t.partitions.length).fill(-1);
      for (const p of t.partitions) if (p.partition < leaders.length) leaders[p.partition] = p.leaderId;
      this.#leaders.set(t.name, leaders);
    }
  }

  #managerFor(address: string): ConnectionManager {
    return new ConnectionManager({
      ...this.#options,
      brokers: [address],
      onConnectError: () => this.refresh(),
    });
  }

  #becomeSingle(): void {
    this.#single = true;
    this.#leaders.clear();
    for (const b of this.#brokers.values()) b.manager.close();
    this.#brokers.clear();
  }
}

function isUnknown(err: ConchError): boolean {
  return err.code === ErrorCode.UNKNOWN_TOPIC || err.code === ErrorCode.UNKNOWN_PARTITION;
}

/** Errors that say a request reached a broker that does not lead its partition (now). */
function isLeaderError(err: ConchError): boolean {
  return err.code >= ErrorCode.NOT_LEADER && err.code <= ErrorCode.OFFSET_NOT_AVAILABLE;
}
