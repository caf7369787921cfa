// Drives kafkajs 2.2.4 through produce, group consume + commit and admin calls.
// Usage: node kafkajs.mjs BROKER
import { Kafka, logLevel } from "kafkajs";

const kafka = new Kafka({
  brokers: [process.argv[2]],
  clientId: "kafkajs",
  logLevel: logLevel.NOTHING,
  retry: { retries: 1 },
});
const attempt = async (name, f) => {
  try {
    await f();
  } catch (e) {
    console.log(name, e.message);
  }
};
const producer = kafka.producer();
await producer.connect();
await attempt("send", () =>
  producer.send({
    topic: "t1",
    messages: [{ key: "k", value: "hi", partition: 0, headers: { h: "v" }, timestamp: "1700000000000" }],
  }),
);
await producer.disconnect();
const consumer = kafka.consumer({ groupId: "g1", sessionTimeout: 6000, heartbeatInterval: 500 });
await consumer.connect();
await consumer.subscribe({ topic: "t1", fromBeginning: true });
let resolve;
const got = new Promise((r) => (resolve = r));
await consumer.run({
  autoCommit: false,
  eachMessage: async ({ topic, partition, message }) => {
    await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
    resolve();
  },
});
await Promise.race([got, new Promise((r) => setTimeout(r, 8000))]);
await consumer.disconnect();
const admin = kafka.admin();
await admin.connect();
await attempt("offsets", () => admin.fetchTopicOffsets("t1"));
await attempt("groupOffsets", () => admin.fetchOffsets({ groupId: "g1", topics: ["t1"] }));
await attempt("create", () =>
  admin.createTopics({ topics: [{ topic: "t2", numPartitions: 2 }], timeout: 2000 }),
);
await attempt("partitions", () =>
  admin.createPartitions({ topicPartitions: [{ topic: "t2", count: 3 }], timeout: 2000 }),
);
await attempt("configs", () =>
  admin.describeConfigs({ resources: [{ type: 2, name: "t1" }], includeSynonyms: false }),
);
await attempt("list", () => admin.listGroups());
await attempt("describe", () => admin.describeGroups(["g1"]));
await attempt("delete", () => admin.deleteTopics({ topics: ["t2"], timeout: 2000 }));
await admin.disconnect();
