import {
  connect,
  createInbox,
  DiscardPolicy,
  type JetStreamClient,
  type NatsConnection,
  RetentionPolicy,
  StorageType,
} from "nats";
import { sleep } from "../suite/deadline.js";
import type { ClientDriver, Consumer, Endpoint, OnMessage, Producer } from "../suite/types.js";

// NATS JetStream driven by the official `nats` client. Every message is its own publish with its
// own acknowledgement (JetStream 2.9 has no batch publish); a batch is that many publishes in flight
// at once. Reading uses the ordered consumer (an ephemeral pull consumer the client re-creates on
// any gap), pulling up to READ_BATCH messages per request.

const READ_BATCH = 10_000;
const PUBLISH_TIMEOUT_MS = 30_000;

function open(endpoint: Endpoint): Promise<NatsConnection> {
  // noAsyncTraces: otherwise every request (each JetStream publish is one) captures a stack trace
  // up front, in case it fails, which costs more than the rest of the publish.
  return connect({
    servers: `${endpoint.host}:${endpoint.port}`,
    maxReconnectAttempts: 0,
    noAsyncTraces: true,
  });
}

export async function natsClient(endpoint: Endpoint): Promise<ClientDriver> {
  const admin = await open(endpoint);
  const jsm = await admin.jetstreamManager();
  // The listener opens before JetStream has finished starting: wait until it answers.
  for (let attempt = 0; ; attempt++) {
    try {
      await jsm.getAccountInfo();
      break;
    } catch (err) {
      if (attempt >= 50) throw err;
      await sleep(100);
    }
  }
  return {
    async createStream(name, partitions = 1) {
      await jsm.streams.add({
        name,
        // Spread over partitions: a subject per key in one stream (<name>.0 ...), JetStream's way
        // of keeping keyed messages apart.
        subjects: [partitions > 1 ? `${name}.*` : name],
        storage: StorageType.File,
        num_replicas: 1,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
      });
    },
    async openProducer(stream, _durability, partitions = 1) {
      const nc = await open(endpoint);
      const subjects =
        partitions > 1 ? Array.from({ length: partitions }, (_, i) => `${stream}.${i}`) : [stream];
      return new NatsProducer(nc, subjects);
    },
    async openConsumer(stream) {
      const nc = await open(endpoint);
      return new NatsConsumer(nc, nc.jetstream(), stream);
    },
    async close() {
      await admin.close();
    },
  };
}

/**
 * JetStream's asynchronous publish: core publishes that carry a reply subject, to which the server
 * sends each message's PubAck (what the Go client's PublishAsync does). Every send call gets its
 * own reply subject, so acknowledgements are matched to calls whatever order they come back in.
 * nats.js 2.29's js.publish() was measured at about 50 us of client CPU per message (a timer, a
 * promise race, a headers object and a cancelled-error object per request): it would measure the
 * client, not the server, so it is not used.
 */
class NatsProducer implements Producer {
  readonly #nc: NatsConnection;
  /** The subjects messages go to, taken in turn (one unless spread over partitions). */
  readonly #subjects: string[];
  #next = 0;
  readonly #inbox: string;
  readonly #pending = new Map<number, PendingCall>();
  #nextCall = 0;

  constructor(nc: NatsConnection, subjects: string[]) {
    this.#nc = nc;
    this.#subjects = subjects;
    this.#inbox = createInbox();
    const prefix = this.#inbox.length + 1;
    nc.subscribe(`${this.#inbox}.*`, {
      callback: (err, msg) => {
        if (err) return this.#failAll(err);
        const id = Number(msg.subject.slice(prefix));
        const call = this.#pending.get(id);
        if (!call) return;
        // A PubAck is {"stream":..,"seq":..}; a failure is {"error":{..}}.
        if (msg.data[2] !== CHAR_S)
          return this.#settle(id, call, new Error(`publish failed: ${msg.string()}`));
        if (--call.remaining === 0) this.#settle(id, call);
      },
    });
  }

  sendBatch(payloads: readonly Buffer[]): Promise<void> {
    const id = this.#nextCall++;
    const reply = `${this.#inbox}.${id}`;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const call = this.#pending.get(id);
        if (call) this.#settle(id, call, new Error(`no acknowledgement within ${PUBLISH_TIMEOUT_MS} ms`));
      }, PUBLISH_TIMEOUT_MS);
      this.#pending.set(id, { remaining: payloads.length, resolve, reject, timer });
      const subjects = this.#subjects;
      for (const payload of payloads) {
        this.#nc.publish(subjects[this.#next]!, payload, { reply });
        this.#next = this.#next + 1 === subjects.length ? 0 : this.#next + 1;
      }
    });
  }

  #settle(id: number, call: PendingCall, err?: Error): void {
    this.#pending.delete(id);
    clearTimeout(call.timer);
    if (err) call.reject(err);
    else call.resolve();
  }

  #failAll(err: Error): void {
    for (const [id, call] of this.#pending) this.#settle(id, call, err);
  }

  async close(): Promise<void> {
    this.#failAll(new Error("producer closed"));
    await this.#nc.close();
  }
}

const CHAR_S = "s".charCodeAt(0);

interface PendingCall {
  remaining: number;
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

class NatsConsumer implements Consumer {
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #stream: string;

  constructor(nc: NatsConnection, js: JetStreamClient, stream: string) {
    this.#nc = nc;
    this.#js = js;
    this.#stream = stream;
  }

  async run(onMessage: OnMessage, signal: AbortSignal): Promise<void> {
    const consumer = await this.#js.consumers.get(this.#stream);
    let stopped = false;
    const messages = await consumer.consume({
      max_messages: READ_BATCH,
      callback: (m) => {
        if (stopped) return;
        if (!onMessage(m.data, 0, m.data.length)) {
          stopped = true;
          messages.stop();
        }
      },
    });
    const onAbort = () => messages.stop();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      await messages.closed();
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  async close(): Promise<void> {
    await this.#nc.close();
  }
}
