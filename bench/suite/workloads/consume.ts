import { startClock } from "../clock.js";
import { produce } from "./produce.js";
import { totalMessages, type Workload } from "./workload.js";

/** 2. One consumer reading the whole stream written by workload 1, from its first message. */
export const consume: Workload = {
  id: "consume",
  title: "2. consume",
  method:
    "1 consumer reading the 5,000,000 messages of workload 1 from the start, in batches of up to 10,000",
  durability: "interval",
  after: "produce",
  params: (scale) => produce.params(scale),
  async run(driver, p) {
    const expected = totalMessages(p);
    const consumer = await driver.openConsumer(p.stream);
    let messages = 0;
    let payloadBytes = 0;
    let wrongSize = 0;
    const stop = startClock();
    try {
      await consumer.run((_bytes, start, end) => {
        messages++;
        payloadBytes += end - start;
        if (end - start !== p.payloadBytes) wrongSize++;
        return messages < expected;
      }, new AbortController().signal);
    } finally {
      await consumer.close();
    }
    const span = stop();
    if (messages !== expected || wrongSize > 0) {
      throw new Error(`read ${messages} of ${expected} messages, ${wrongSize} of the wrong size`);
    }
    return { messages, payloadBytes, seconds: span.seconds, clientCpuSeconds: span.cpuSeconds };
  },
};
