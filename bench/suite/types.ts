// The contracts between the suite's runner, the systems it measures and the workloads it runs.
// A system is two halves: a server half (started by the parent process, on loopback, in a temp
// directory) and a client half (loaded by a separate worker process that runs one workload).

/** Where a started broker listens. */
export interface Endpoint {
  host: string;
  port: number;
}

/** How the broker acknowledges writes for a workload. */
export type Durability =
  /** Acknowledge once written to the OS; fsync every second in the background. */
  | "interval"
  /** Acknowledge only after an fsync that covers the message. */
  | "durable";

/** Totals since the broker started (the line scripts/gc-share.mjs prints). */
export interface GcSnapshot {
  cpuMs: number;
  gcMs: number;
  gcCount: number;
}

/** A broker process the suite started and must stop. */
export interface RunningServer {
  readonly pid: number;
  readonly endpoint: Endpoint;
  /** Its Kafka listener, for a system that has one. */
  readonly kafka?: Endpoint;
  /**
   * The broker's GC time and CPU time so far, for a system that can report them (Conch, through
   * scripts/gc-share.mjs); null when it did not answer.
   */
  gcSnapshot?(): Promise<GcSnapshot | null>;
  /** Stops the process (SIGTERM, then SIGKILL after a bound) and removes its data directory. */
  stop(): Promise<void>;
}

/** The parent's view of a system: can it run here, and how to start it. */
export interface ServerSpec {
  readonly name: string;
  /** Whether its brokers serve the Kafka protocol (the Kafka workloads run only there). */
  readonly servesKafka?: boolean;
  /** Version string of the installed server, or a reason it cannot run on this machine. */
  probe(): Promise<{ ok: true; version: string; client: string } | { ok: false; reason: string }>;
  /** A reason the system cannot honour a durability mode, or null when it can. */
  unsupported(durability: Durability): string | null;
  /** What the server is configured to do for each durability mode, in words, for the report. */
  describe(durability: Durability): string;
  start(durability: Durability): Promise<RunningServer>;
}

/** A producer bound to one stream. */
export interface Producer {
  /**
   * Sends the payloads in order; resolves when the broker has acknowledged all of them
   * (per the durability the producer was opened with), with whatever the client's call returns.
   * Several calls may be in flight.
   */
  sendBatch(payloads: readonly Buffer[]): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Called for each message a consumer reads, with the payload as bytes[start, end) (so a client
 * that reads records in place need not make a view per message); returning false stops the consumer.
 */
export type OnMessage = (bytes: Uint8Array, start: number, end: number) => boolean;

/** A consumer reading one stream from its start. */
export interface Consumer {
  /**
   * Delivers messages from the start of the stream, waiting for new ones as they arrive, until
   * onMessage returns false or the signal aborts. Resolves after it stopped.
   */
  run(onMessage: OnMessage, signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** The worker's view of a system: connect and get producers and consumers. */
export interface ClientDriver {
  /**
   * Creates the stream (topic) used by one workload; with `partitions` > 1, that many partitions
   * (Conch), streams (Redis) or subjects of one stream (NATS).
   */
  createStream(name: string, partitions?: number): Promise<void>;
  /**
   * Opens a producer on its own connection. With `partitions` > 1 it gives each message a key and
   * spreads them over all the partitions, one key after another.
   */
  openProducer(stream: string, durability: Durability, partitions?: number): Promise<Producer>;
  /** Opens a consumer on its own connection. */
  openConsumer(stream: string): Promise<Consumer>;
  /**
   * Messages of `stream` that readers can see now (Conch: the sum of its partitions' high
   * watermarks). Absent where every acknowledged message is readable at once.
   */
  readable?(stream: string): Promise<number>;
  /** Closes the admin connection. */
  close(): Promise<void>;
}

export type ClientFactory = (endpoint: Endpoint) => Promise<ClientDriver>;

/** What a worker reports for one workload run. */
export interface WorkloadOutcome {
  messages: number;
  payloadBytes: number;
  seconds: number;
  /** Client CPU during the measured span. */
  clientCpuSeconds: number;
  /** Client CPU of the whole worker process, set-up included (filled in by the worker). */
  workerCpuSeconds?: number;
  /** Latency from each message's scheduled send time to its receipt (the workload's headline). */
  latencyUs?: LatencySummary;
  /**
   * The part of it from the send call to receipt: without the wait for the producer's tick and
   * whatever else held up the producer's event loop before the call.
   */
  transferUs?: LatencySummary;
  /**
   * Workload 5's second figure: the rate of one more round of the same workload, after the measured
   * (cold) round and at least WARM_UP_SECONDS more of it on the same server and client.
   */
  warmMsgsPerSec?: number;
  /** Workload 7: the measured producer's rate alone, just before the measured round. */
  soloMsgsPerSec?: number;
  /** Workload 8: the paced producer's latency alone, before the measured round. */
  soloLatencyUs?: LatencySummary;
  /**
   * Workload 6b: the rate from the first send until every acknowledged message was readable (the
   * broker may answer before a partition's own log holds its records).
   */
  readableMsgsPerSec?: number;
  /** Every message the worker sent, when more than `messages` (the rounds around the measured one). */
  messagesSent?: number;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}
