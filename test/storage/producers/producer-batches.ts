/** Batches of an idempotent producer, for the producer-state tests. */
import { BatchBuilder } from "../../../src/format/batch-builder.js";

const builder = new BatchBuilder({ slabBytes: 64 * 1024 });

/** A batch of `count` records `${tag}-${i}` from producer `id`, epoch `epoch`, first sequence `seq`. */
export function producerBatch(id: number, epoch: number, seq: number, count = 2, tag = `s${seq}`): Buffer {
  for (let i = 0; i < count; i++) builder.add(`${tag}-${i}`, null, 1_700_000_000_000);
  builder.setProducer(id, epoch, seq);
  return Buffer.from(builder.finish());
}
