/**
 * A broker in a child process for the crash test: `node broker-child.js <dataDir> <port>` opens the
 * broker, listens on 127.0.0.1:<port> (0 = any) and prints "listening <port>". It is meant to die by
 * SIGKILL. Run with no arguments (as a test runner scanning the folder would) it does nothing.
 */
import { Broker } from "../../src/broker/broker.js";
import { ConchServer } from "../../src/server/conch-server.js";

const [dataDir, port] = process.argv.slice(2);
if (dataDir !== undefined && port !== undefined) {
  const broker = await Broker.open({ dataDir, flush: "interval", segmentBytes: 4 << 20 });
  const server = new ConchServer(broker);
  const address = await server.listen(Number(port), "127.0.0.1");
  process.stdout.write(`listening ${address.port}\n`);
}
