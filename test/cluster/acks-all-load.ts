/**
 * A steady acks=all load from kafkajs for the cluster tests and benches: one record at a time,
 * with retries, recording each acknowledgement's offset, value and time.
 */
import { Kafka, logLevel, type Producer } from "kafkajs";

/**
 * A kafkajs client for acks=all load through failovers: short timeouts and quick, many retries,
 * so a change of leader costs little more than the cluster's own time to move it.
 */
export function failoverKafka(kafkaPorts: readonly number[]): Kafka {
  return new Kafka({
    brokers: kafkaPorts.map((port) => `127.0.0.1:${port}`),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 1500,
    retry: { retries: 50, initialRetryTime: 50, maxRetryTime: 250, factor: 0.2 },
  });
}

export interface AcksAllLoad {
  /** "offset" -> value of every acknowledged record. */
  readonly acked: Map<string, string>;
  /** performance.now() of each acknowledgement, in order. */
  readonly ackTimes: number[];
  stop(): Promise<void>;
}

export function produceUntilStopped(producer: Producer, topic: string, partition: number): AcksAllLoad {
  const acked = new Map<string, string>();
  const ackTimes: number[] = [];
  let producing = true;
  let n = 0;
  const done = (async () => {
    while (producing) {
      const value = `v${n++}`;
      try {
        const [res] = await producer.send({ topic, acks: -1, messages: [{ value, partition }] });
        acked.set(String(res?.baseOffset), value);
        ackTimes.push(performance.now());
      } catch {
        // Not acknowledged: nothing is promised for it.
      }
    }
  })();
  return {
    acked,
    ackTimes,
    async stop(): Promise<void> {
      producing = false;
      await done;
    },
  };
}

/** The longest time without an acknowledgement from `from` until the next ack after `to`. */
export function longestPause(ackTimes: readonly number[], from: number, to: number): number {
  let last = from;
  let longest = 0;
  for (const at of ackTimes) {
    if (at <= from) continue;
    longest = Math.max(longest, at - last);
    last = at;
    if (at > to) break;
  }
  return longest;
}
