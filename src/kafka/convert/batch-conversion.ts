/**
 * How the Kafka front-end stores and serves records: the one seam between Kafka's RecordBatch v2
 * and what the broker's partition logs hold. For now it converts (docs/kafka.md, proposal A): a
 * produce's Kafka batches become Conch batches, one for one, and a fetch's Conch batches become
 * Kafka batches, so one Kafka record is one offset in both protocols. Storing Kafka batches
 * natively later (proposal B) replaces this implementation, not its callers.
 */
export interface BatchConversion {
  /**
   * The Kafka batches of one partition of a produce as the bytes the broker appends. All or
   * nothing: a batch that cannot be stored as it came throws (a KafkaRefusal naming what is not
   * supported, or a ConchError), and nothing is stored. `nowMs` stands in for a record's timestamp
   * when the producer sent none (-1). The result is valid until the next call (the broker copies
   * what it keeps).
   */
  fromKafka(records: Buffer, maxBatchBytes: number, nowMs: number): Buffer;
  /**
   * Stored batches (whole, as a fetch reads them) as Kafka batches with the same offsets: one
   * buffer, or pieces to be written one after another (views of `stored` among them).
   */
  toKafka(stored: Buffer): Buffer | Buffer[];
}
