/** The converting BatchConversion (proposal A of docs/kafka.md): what the Kafka front-end uses now. */
import type { BatchConversion } from "./batch-conversion.js";
import { ConchToKafka } from "./conch-to-kafka.js";
import { KafkaToConch } from "./kafka-to-conch.js";

export class ConvertingBatches implements BatchConversion {
  readonly #in = new KafkaToConch();
  readonly #out = new ConchToKafka();

  fromKafka(records: Buffer, maxBatchBytes: number, nowMs: number): Buffer {
    return this.#in.convert(records, maxBatchBytes, nowMs);
  }

  toKafka(stored: Buffer): Buffer {
    return stored.length === 0 ? stored : this.#out.convert(stored);
  }
}
