/**
 * A test's clients of its broker (kafkajs above all), made so that none outlives the test. kafkajs
 * retries are bounded (TEST_RETRY, unless the test sets its own), a kafkajs consumer that crashes
 * stays down instead of restarting itself (kafkajs restarts a crashed consumer for ever by
 * default), and every producer, consumer and admin made through it, and every client given to
 * `closeBeforeBroker`, is closed in a t.after hook registered when the TestClients is made. Make it
 * before the broker: t.after hooks run in the order they were registered, so the clients leave
 * while the broker is still up. A kafkajs consumer whose broker went first reconnects, crashes,
 * and (restarting) keeps the test file's process alive.
 */
import type { TestContext } from "node:test";
import {
  type Admin,
  type AdminConfig,
  type Consumer,
  type ConsumerConfig,
  Kafka,
  type KafkaConfig,
  logLevel,
  type Producer,
  type ProducerConfig,
  type RetryOptions,
} from "kafkajs";

/** kafkajs's own count (5), with shorter waits: a test's broker answers at once or not at all. */
export const TEST_RETRY: RetryOptions = { retries: 5, initialRetryTime: 100, maxRetryTime: 2_000 };

/** How one client is closed. */
type Close = () => Promise<unknown>;

export class TestClients {
  readonly #closes: Close[] = [];

  constructor(t: TestContext) {
    t.after(() => this.closeAll());
  }

  /** Another client of the test's broker (a native SDK client, say), closed with the rest. */
  closeBeforeBroker(close: Close): void {
    this.#closes.push(close);
  }

  /** A kafkajs client of `brokers`: logging off, TEST_RETRY unless `config` says otherwise. */
  kafkajs(brokers: string | string[], config: Partial<KafkaConfig> = {}): Kafka {
    return new TrackedKafka(
      {
        clientId: "conch-test",
        logLevel: logLevel.NOTHING,
        retry: TEST_RETRY,
        ...config,
        brokers: typeof brokers === "string" ? [brokers] : brokers,
      },
      this.#closes,
    );
  }

  /** Closes every client made or given so far, the last first; a failed close is ignored. */
  async closeAll(): Promise<void> {
    for (const close of this.#closes.splice(0).reverse()) await close().catch(() => {});
  }
}

class TrackedKafka extends Kafka {
  readonly #closes: Close[];

  constructor(config: KafkaConfig, closes: Close[]) {
    super(config);
    this.#closes = closes;
  }

  override producer(config?: ProducerConfig): Producer {
    const producer = super.producer(config);
    this.#closes.push(() => producer.disconnect());
    return producer;
  }

  override consumer(config: ConsumerConfig): Consumer {
    // A consumer's retry goes over the client's; kafkajs's default for it is { retries: 5 }.
    const consumer = super.consumer({
      ...config,
      retry: { retries: 5, ...config.retry, restartOnFailure: async () => false },
    });
    this.#closes.push(() => consumer.disconnect());
    return consumer;
  }

  override admin(config?: AdminConfig): Admin {
    const admin = super.admin(config);
    this.#closes.push(() => admin.disconnect());
    return admin;
  }
}
