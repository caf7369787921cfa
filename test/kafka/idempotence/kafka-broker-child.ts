/**
 * A broker with its Kafka listener in a child process, for the restart tests: `node
 * kafka-broker-child.js <dataDir>` opens the broker (flush=sync, so an acknowledged batch is on
 * disk), listens for Kafka on 127.0.0.1 (any port) and prints "listening <port>". SIGTERM stops it
 * cleanly; SIGKILL is the crash. Run with no arguments (as a test runner scanning the folder would)
 * it does nothing.
 */
import { Broker } from "../../../src/broker/broker.js";
import { KafkaFrontEnd } from "../../../src/kafka/server/kafka-front-end.js";
import { ConchServer } from "../../../src/server/conch-server.js";

const [dataDir] = process.argv.slice(2);
if (dataDir !== undefined) {
  const broker = await Broker.open({ dataDir, flush: "sync", segmentBytes: 4096, autoCreateTopics: true });
  const server = new ConchServer(broker);
  const kafka = new KafkaFrontEnd(server, broker);
  await server.listen(0, "127.0.0.1");
  const { port } = await kafka.listen(0, "127.0.0.1");
  process.once("SIGTERM", () => {
    void server
      .close()
      .then(() => broker.close())
      .then(() => process.exit(0));
  });
  process.stdout.write(`listening ${port}\n`);
}
