/**
 * A broker's lease over the npm `etcd3` client's raw Lease calls, with a keepalive loop of our
 * own. The client's Lease class would do the loop, but it also declares the lease lost by itself
 * after two TTLs without an answer and stops renewing it for good; during an etcd leader election
 * that outlasts that guess, the lease lives on (the new leader extends it) while the broker would
 * register again under a new one, a broker death for the controller. Here only etcd's word ends a
 * lease: a keepalive answered with TTL 0 (no such lease). A stream that errs, ends or goes silent
 * for a TTL is opened again (the connection pool picks a member), as the client's loop does.
 */
import type { Etcd3, IDuplexStream, ILeaseKeepAliveRequest, ILeaseKeepAliveResponse } from "etcd3";
import type { MetaSession, SessionListener } from "./meta-store.js";

/** The pause before a broken keepalive stream is opened again. */
const REOPEN_DELAY_MS = 100;

type KeepAliveStream = IDuplexStream<ILeaseKeepAliveRequest, ILeaseKeepAliveResponse>;

export class Etcd3Lease implements MetaSession {
  readonly leaseId: string;
  readonly ttlSeconds: number;
  readonly #client: Etcd3;
  /** The client LeaseTimeToLive goes through (no retries, no circuit breaker: etcd3-store.ts). */
  readonly #questions: Etcd3;
  readonly #listener: SessionListener;
  readonly #ttlMs: number;
  readonly #interval: NodeJS.Timeout;
  #stream: KeepAliveStream | null = null;
  /** Send times of keepalives not yet answered on the current stream, oldest first (answers come in order). */
  readonly #fired: number[] = [];
  #ended = false;

  constructor(
    client: Etcd3,
    questions: Etcd3,
    leaseId: string,
    ttlSeconds: number,
    grantSentAt: number,
    listener: SessionListener,
  ) {
    this.#client = client;
    this.#questions = questions;
    this.leaseId = leaseId;
    this.ttlSeconds = ttlSeconds;
    this.#listener = listener;
    this.#ttlMs = ttlSeconds * 1000;
    listener.renewed(grantSentAt + this.#ttlMs);
    // A third of the TTL, as etcd's own Go client: two answers can go missing before the deadline.
    this.#interval = setInterval(() => this.#fire(), this.#ttlMs / 3);
    this.#interval.unref();
    this.#open();
  }

  timeToLive(timeoutMs: number): Promise<number> {
    return this.#questions.leaseClient
      .leaseTimeToLive({ ID: this.leaseId }, { deadline: Date.now() + timeoutMs })
      .then((res) => Number(res.TTL));
  }

  async revoke(): Promise<void> {
    this.#end();
    await this.#client.leaseClient.leaseRevoke({ ID: this.leaseId });
  }

  release(): void {
    this.#end();
  }

  #open(): void {
    if (this.#ended) return;
    this.#client.leaseClient
      .leaseKeepAlive()
      .then((stream) => {
        if (this.#ended) {
          stream.end();
          return;
        }
        this.#stream = stream;
        this.#fired.length = 0;
        stream.on("data", (res) => this.#answer(stream, res));
        stream.on("error", () => this.#broken(stream));
        stream.on("end", () => this.#broken(stream));
        this.#fire();
      })
      .catch(() => this.#reopenLater());
  }

  #answer(stream: KeepAliveStream, res: ILeaseKeepAliveResponse): void {
    if (stream !== this.#stream) return;
    const sentAt = this.#fired.shift();
    if (res.TTL === "0") {
      this.#end();
      this.#listener.lost(new Error(`etcd holds no lease ${this.leaseId} (expired or revoked)`));
      return;
    }
    if (sentAt !== undefined) this.#listener.renewed(sentAt + this.#ttlMs);
  }

  #fire(): void {
    const stream = this.#stream;
    if (stream === null) return;
    const oldest = this.#fired[0];
    // Silent for a TTL (a member that lost its leader can hold a keepalive that long): try afresh.
    if (oldest !== undefined && performance.now() - oldest > this.#ttlMs) {
      this.#broken(stream);
      return;
    }
    this.#fired.push(performance.now());
    stream.write({ ID: this.leaseId });
  }

  #broken(stream: KeepAliveStream): void {
    if (stream !== this.#stream) return;
    this.#stream = null;
    this.#fired.length = 0;
    // Half-closed, not cancelled: the client counts a cancelled call against the member's health.
    stream.end();
    this.#reopenLater();
  }

  #reopenLater(): void {
    if (this.#ended) return;
    setTimeout(() => this.#open(), REOPEN_DELAY_MS).unref();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    clearInterval(this.#interval);
    const stream = this.#stream;
    this.#stream = null;
    stream?.end();
  }
}
